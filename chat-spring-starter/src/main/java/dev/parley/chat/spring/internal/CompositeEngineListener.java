package dev.parley.chat.spring.internal;

import dev.parley.chat.engine.EngineListener;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.Run;
import java.util.List;

/** Forwards to every listener bean, in order. */
public final class CompositeEngineListener implements EngineListener {
    private final EngineListener[] listeners;

    public CompositeEngineListener(List<EngineListener> listeners) {
        this.listeners = listeners.toArray(new EngineListener[0]);
    }

    @Override
    public void runStarted(Run run) {
        for (EngineListener listener : listeners) {
            listener.runStarted(run);
        }
    }

    @Override
    public void runFinished(Run run) {
        for (EngineListener listener : listeners) {
            listener.runFinished(run);
        }
    }

    @Override
    public void eventAppended(RunEvent event) {
        for (EngineListener listener : listeners) {
            listener.eventAppended(event);
        }
    }

    @Override
    public void subscriberOpened(String runId) {
        for (EngineListener listener : listeners) {
            listener.subscriberOpened(runId);
        }
    }

    @Override
    public void subscriberClosed(String runId) {
        for (EngineListener listener : listeners) {
            listener.subscriberClosed(runId);
        }
    }
}
