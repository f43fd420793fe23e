package dev.parley.chat.spring.internal;

import dev.parley.chat.engine.EngineListener;
import dev.parley.chat.engine.StoreWrite;
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

    /** Every listener's end is called, in reverse order. */
    @Override
    public WriteEnd storeWriteStarted(StoreWrite write) {
        WriteEnd[] ends = new WriteEnd[listeners.length];
        for (int i = 0; i < listeners.length; i++) {
            ends[i] = listeners[i].storeWriteStarted(write);
        }
        return failure -> {
            for (int i = ends.length - 1; i >= 0; i--) {
                ends[i].ended(failure);
            }
        };
    }
}
