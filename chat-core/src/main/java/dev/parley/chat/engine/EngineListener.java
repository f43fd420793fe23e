package dev.parley.chat.engine;

import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.Run;
import org.jspecify.annotations.Nullable;

/**
 * Observes the engine, e.g. for metrics. Every method has a no-op default, so the interface can grow.
 * Methods are called on the engine's threads, sometimes on the hot path ({@link #eventAppended}): they
 * must be fast and should not throw.
 *
 * <p>A listener that throws anyway — a runtime exception, an {@link Error}, or a checked exception thrown
 * where Java would not allow it (Kotlin) — changes nothing for the run: what it threw is logged (WARN) and
 * ignored, the run goes on, ends and frees its thread as it would have. Only a {@link VirtualMachineError}
 * (out of memory, stack overflow) is logged and passed on.
 */
public interface EngineListener {
    /**
     * A run began working here: it was launched (it may have waited as QUEUED before), or this instance follows
     * it again after a restart or takes it over from another instance (then it may end at once, INTERRUPTED). A
     * run cancelled while queued ends ({@link #runFinished}) without having started.
     */
    default void runStarted(Run run) {
    }

    /** A run ended; {@code run.status()} is terminal. */
    default void runFinished(Run run) {
    }

    /** An event was logged. */
    default void eventAppended(RunEvent event) {
    }

    /** A subscriber attached to a run's events. */
    default void subscriberOpened(String runId) {
    }

    /** A subscriber left (completed, failed, cut off or cancelled). */
    default void subscriberClosed(String runId) {
    }

    /**
     * The engine is about to write to its store; the returned callback is called once, on the same thread,
     * when the write returns or throws (then with what it threw). For timing writes (a trace of store flushes).
     */
    default WriteEnd storeWriteStarted(StoreWrite write) {
        return WriteEnd.NOTHING;
    }

    /** Told when a store write ends. */
    @FunctionalInterface
    interface WriteEnd {
        /** Does nothing. */
        WriteEnd NOTHING = failure -> {
        };

        /** @param failure what the write threw, null if it succeeded */
        void ended(@Nullable Throwable failure);
    }
}
