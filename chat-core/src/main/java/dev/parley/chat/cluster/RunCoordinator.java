package dev.parley.chat.cluster;

import java.util.Map;
import java.util.UUID;

/**
 * Connects the engines of several host instances that share one store. The event log stays in the store;
 * a coordinator only carries small messages:
 *
 * <ul>
 *   <li>progress notices — "run r has stored events up to seq n" — so that subscribers on other instances
 *       read the new events from the store at once instead of polling; at most one per run per flush;</li>
 *   <li>control messages — cancel, deliver a clarify answer — to the instance that holds a run, and their
 *       replies.</li>
 * </ul>
 *
 * Delivery may be lost (a dropped connection): the coordinator then calls {@link Listener#onResync()},
 * and the engine re-reads what it waits for from the store, so a lost notice never becomes a lost event.
 * Implementations are thread-safe; {@link #local()} is the single-instance one.
 */
public interface RunCoordinator extends AutoCloseable {

    /** What a coordinator delivers. Called on the coordinator's thread; must return quickly. */
    interface Listener {
        /** The store holds the run's events up to {@code lastSeq}. */
        void onProgress(String runId, long lastSeq);

        /** A control message for some instance (each instance ignores what it cannot act on). */
        void onControl(ControlMessage message);

        /** Notices may have been lost: re-read from the store. */
        void onResync();
    }

    /** This instance's id, unique among the instances sharing the store. */
    String instanceId();

    /** Starts delivering to {@code listener}. Called once, by the engine. */
    void start(Listener listener);

    /** Announces stored progress, one entry per run. */
    void progressed(Map<String, Long> lastSeqByRun);

    /** Sends a control message to every instance (the one holding the run acts on it). */
    void send(ControlMessage message);

    /** True when other instances may exist: the engine then leases its runs and takes over expired ones. */
    boolean clustered();

    @Override
    default void close() {
    }

    /** The coordinator of a single host: nothing to tell anyone. */
    static RunCoordinator local() {
        String id = "local-" + UUID.randomUUID();
        return new RunCoordinator() {
            @Override
            public String instanceId() {
                return id;
            }

            @Override
            public void start(Listener listener) {
            }

            @Override
            public void progressed(Map<String, Long> lastSeqByRun) {
            }

            @Override
            public void send(ControlMessage message) {
            }

            @Override
            public boolean clustered() {
                return false;
            }
        };
    }
}
