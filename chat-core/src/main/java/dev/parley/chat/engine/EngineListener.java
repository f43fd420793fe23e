package dev.parley.chat.engine;

import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.Run;

/**
 * Observes the engine, e.g. for metrics. Every method has a no-op default, so the interface can grow.
 * Methods are called on the engine's threads, sometimes on the hot path ({@link #eventAppended}): they
 * must be fast and must not throw.
 */
public interface EngineListener {
    /** A run began working (it may have waited as QUEUED before). */
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
}
