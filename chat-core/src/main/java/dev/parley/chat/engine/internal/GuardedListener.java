package dev.parley.chat.engine.internal;

import dev.parley.chat.engine.EngineListener;
import dev.parley.chat.engine.StoreWrite;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.Run;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The host's {@link EngineListener} with whatever it throws caught and logged — a runtime exception, an
 * {@link Error}, a checked exception thrown sneakily (Kotlin, Lombok): a listener is called on a run's own
 * path (its events, its end), and a listener that throws must not leave a run unfinished. Only a
 * {@link VirtualMachineError} (out of memory, stack overflow) is rethrown, after the log.
 */
final class GuardedListener implements EngineListener {
    private static final Logger log = LoggerFactory.getLogger(GuardedListener.class);

    private final EngineListener delegate;

    GuardedListener(EngineListener delegate) {
        this.delegate = delegate;
    }

    @Override
    public void runStarted(Run run) {
        guard("runStarted", () -> delegate.runStarted(run));
    }

    @Override
    public void runFinished(Run run) {
        guard("runFinished", () -> delegate.runFinished(run));
    }

    @Override
    public void eventAppended(RunEvent event) {
        guard("eventAppended", () -> delegate.eventAppended(event));
    }

    @Override
    public void subscriberOpened(String runId) {
        guard("subscriberOpened", () -> delegate.subscriberOpened(runId));
    }

    @Override
    public void subscriberClosed(String runId) {
        guard("subscriberClosed", () -> delegate.subscriberClosed(runId));
    }

    @Override
    public WriteEnd storeWriteStarted(StoreWrite write) {
        WriteEnd[] end = {WriteEnd.NOTHING};
        guard("storeWriteStarted", () -> end[0] = delegate.storeWriteStarted(write));
        WriteEnd started = end[0] == null ? WriteEnd.NOTHING : end[0];
        return failure -> guard("storeWriteStarted's end", () -> started.ended(failure));
    }

    private static void guard(String method, Runnable call) {
        try {
            call.run();
        } catch (Throwable e) {
            if (e instanceof VirtualMachineError fatal) {
                log.error("The engine listener threw a fatal error from {}", method, fatal);
                throw fatal;
            }
            log.warn("The engine listener threw from {}; ignored", method, e);
        }
    }
}
