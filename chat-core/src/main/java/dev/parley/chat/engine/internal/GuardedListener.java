package dev.parley.chat.engine.internal;

import dev.parley.chat.engine.EngineListener;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.Run;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host's {@link EngineListener} with its exceptions caught and logged: a listener is called on a run's
 * own path (its events, its end), and a listener that throws must not leave a run unfinished.
 */
final class GuardedListener implements EngineListener {
    private static final Logger log = LoggerFactory.getLogger(GuardedListener.class);

    private final EngineListener delegate;

    GuardedListener(EngineListener delegate) {
        this.delegate = delegate;
    }

    @Override
    public void runStarted(Run run) {
        try {
            delegate.runStarted(run);
        } catch (RuntimeException e) {
            log.warn("The engine listener threw from runStarted; ignored", e);
        }
    }

    @Override
    public void runFinished(Run run) {
        try {
            delegate.runFinished(run);
        } catch (RuntimeException e) {
            log.warn("The engine listener threw from runFinished; ignored", e);
        }
    }

    @Override
    public void eventAppended(RunEvent event) {
        try {
            delegate.eventAppended(event);
        } catch (RuntimeException e) {
            log.warn("The engine listener threw from eventAppended; ignored", e);
        }
    }

    @Override
    public void subscriberOpened(String runId) {
        try {
            delegate.subscriberOpened(runId);
        } catch (RuntimeException e) {
            log.warn("The engine listener threw from subscriberOpened; ignored", e);
        }
    }

    @Override
    public void subscriberClosed(String runId) {
        try {
            delegate.subscriberClosed(runId);
        } catch (RuntimeException e) {
            log.warn("The engine listener threw from subscriberClosed; ignored", e);
        }
    }
}
