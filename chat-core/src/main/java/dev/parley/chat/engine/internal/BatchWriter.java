package dev.parley.chat.engine.internal;

import dev.parley.chat.cluster.RunCoordinator;
import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.StoreBatch;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stores the work of all active runs in batches, so that the hot path never waits for a commit per
 * event. A background thread flushes every {@link EngineLimits#eventFlushInterval()}, or sooner once
 * {@link EngineLimits#eventFlushBatchSize()} events wait; a run flushes synchronously at a clarify and at
 * its end ({@link #flushNow()}), so those are durable before anyone sees them.
 *
 * <p>What a crash can lose: the events logged since the last flush (at most one interval's worth, by
 * default 20 ms), never a gap or a reordering — each flush stores whole prefixes of each run's log, in
 * one transaction. A failed write is retried, unchanged, before anything newer is written.
 *
 * <p>Thread-safe. Flushes are serialised.
 */
public final class BatchWriter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BatchWriter.class);

    private final ChatStore store;
    private final RunCoordinator coordinator;
    private final EngineLimits limits;
    private final Clock clock;
    private final Set<ActiveRun> dirty = ConcurrentHashMap.newKeySet();
    private final AtomicLong pendingEvents = new AtomicLong();
    private final Object flushLock = new Object();
    private final Object capacity = new Object();
    private final Thread flusher;
    private volatile boolean closed;

    /** A batch whose write failed, with what it stores per run; retried first. */
    private @Nullable StoreBatch failedBatch;
    private Map<ActiveRun, ActiveRun.Drained> failedSeqs = Map.of();

    BatchWriter(ChatStore store, EngineLimits limits, Clock clock, RunCoordinator coordinator) {
        this.coordinator = coordinator;
        this.store = store;
        this.limits = limits;
        this.clock = clock;
        this.flusher = new Thread(this::flushLoop, "parley-batch-writer");
        this.flusher.setDaemon(true);
        this.flusher.start();
    }

    /** A run has something new to store ({@code newEvents} of it events). Cheap; never blocks. */
    void markDirty(ActiveRun run, int newEvents) {
        dirty.add(run);
        if (newEvents > 0 && pendingEvents.addAndGet(newEvents) >= limits.eventFlushBatchSize()) {
            LockSupport.unpark(flusher);
        }
    }

    /**
     * Stores everything pending now, retrying a failing store a few times.
     *
     * @return false if the store kept failing (the work stays pending and is retried later)
     */
    public boolean flushNow() {
        for (int attempt = 0; attempt < 4; attempt++) {
            if (flushOnce()) {
                return true;
            }
            sleep(50L << attempt);
        }
        return false;
    }

    /** Blocks the calling stream while too many events wait for the store (back-pressure). */
    void awaitCapacity() {
        if (pendingEvents.get() <= limits.maxPendingEvents()) {
            return;
        }
        LockSupport.unpark(flusher);
        synchronized (capacity) {
            while (pendingEvents.get() > limits.maxPendingEvents() && !closed) {
                try {
                    capacity.wait(100);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    private boolean flushOnce() {
        synchronized (flushLock) {
            if (failedBatch != null) {
                if (!write(failedBatch, failedSeqs)) {
                    return false;
                }
                failedBatch = null;
                failedSeqs = Map.of();
            }
            StoreBatch.Builder batch = StoreBatch.builder();
            Map<ActiveRun, ActiveRun.Drained> seqs = new LinkedHashMap<>();
            List<ActiveRun> runs = new ArrayList<>(dirty);
            long now = clock.millis();
            for (ActiveRun run : runs) {
                dirty.remove(run);
                ActiveRun.Drained drained = run.drainForFlush(batch, now);
                if (drained.storesProgress()) {
                    seqs.put(run, drained);
                }
                if (drained.stillDirty()) {
                    dirty.add(run);
                }
            }
            StoreBatch built = batch.build();
            if (built.isEmpty()) {
                return true;
            }
            if (!write(built, seqs)) {
                failedBatch = built;
                failedSeqs = seqs;
                return false;
            }
            return true;
        }
    }

    private boolean write(StoreBatch batch, Map<ActiveRun, ActiveRun.Drained> seqs) {
        try {
            store.write(batch);
        } catch (RuntimeException e) {
            log.warn("Storing {} events and {} messages failed; will retry", batch.events().size(),
                    batch.messages().size(), e);
            return false;
        }
        Map<String, Long> progress = new LinkedHashMap<>();
        for (Map.Entry<ActiveRun, ActiveRun.Drained> entry : seqs.entrySet()) {
            entry.getKey().stored(entry.getValue());
            if (entry.getValue().lastSeq() > 0) {
                progress.put(entry.getKey().runId(), entry.getValue().lastSeq());
            }
        }
        if (!progress.isEmpty()) {
            try {
                coordinator.progressed(progress);
            } catch (RuntimeException e) {
                log.warn("Announcing stored progress to other instances failed; they will catch up", e);
            }
        }
        if (pendingEvents.addAndGet(-batch.events().size()) <= limits.maxPendingEvents()) {
            synchronized (capacity) {
                capacity.notifyAll();
            }
        }
        return true;
    }

    private void flushLoop() {
        long interval = limits.eventFlushInterval().toNanos();
        while (!closed) {
            LockSupport.parkNanos(this, interval);
            try {
                flushOnce();
            } catch (RuntimeException e) {
                log.error("The batch writer failed", e);
            }
        }
    }

    private static void sleep(long millis) {
        try {
            TimeUnit.MILLISECONDS.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the background thread after a last flush. */
    @Override
    public void close() {
        closed = true;
        LockSupport.unpark(flusher);
        try {
            flusher.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (!flushNow()) {
            log.error("The last flush failed: the newest events of the active runs were not stored");
        }
        synchronized (capacity) {
            capacity.notifyAll();
        }
    }
}
