package dev.parley.chat.engine.internal;

import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.store.LeaseLostException;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadGoneException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Stores the work of all active runs in batches, so that the hot path never waits for a commit per
 * event. A background thread flushes every {@link EngineLimits#eventFlushInterval()}, or sooner once
 * {@link EngineLimits#eventFlushBatchSize()} events wait; a run flushes its own work synchronously at an
 * input request and at its end ({@link #flushRun}), so those are durable before anyone sees them.
 *
 * <p>Every transaction is capped ({@link EngineLimits#maxBatchEvents()}, {@link EngineLimits#maxBatchBytes()}):
 * a store that fell behind catches up in a series of bounded transactions, in turn across the runs, and the
 * lock between them is fair, so a run's synchronous flush waits for at most the transaction in progress and
 * then writes only its own run's work.
 *
 * <p>What a crash can lose: the events logged and not stored yet — one interval's worth (by default 20 ms)
 * while the store keeps up, up to {@link EngineLimits#maxPendingEvents()} when it falls behind — never a
 * gap or a reordering: each transaction stores whole prefixes of each run's log.
 *
 * <p>When the store refuses a batch, one run cannot hold up the others: the runs' parts are written one
 * by one, and a run's part that keeps failing on its own while the store takes other writes is written
 * row by row. A row the store still refuses is left out (an event is replaced by a status event saying
 * so, so its seq has no gap), and the run, if still going, fails with STORE_FAILURE. While the store
 * takes no writes at all, everything is kept and retried with a growing pause, and streams are held back
 * once {@link EngineLimits#maxPendingEvents()} events wait. A run whose lease another instance holds (a
 * {@link LeaseLostException} on a fenced batch) is dropped and let go; a run whose thread was deleted (a
 * {@link ThreadGoneException}) is dropped and ended without storing anything more.
 *
 * <p>Thread-safe. Flushes are serialised.
 */
public final class BatchWriter implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BatchWriter.class);
    /** Failures of a run's part on its own before it is written row by row. */
    static final int ISOLATE_AFTER = 3;
    private static final long FIRST_RETRY_PAUSE_MILLIS = 50;
    private static final long MAX_RETRY_PAUSE_MILLIS = 2_000;
    /** Failed writes a synchronous flush tries before it gives up (the background keeps trying). */
    private static final int FLUSH_ATTEMPTS = 4;

    private final EngineContext ctx;
    private final EngineLimits limits;
    private final Set<ActiveRun> dirty = ConcurrentHashMap.newKeySet();
    /** Events logged and neither stored nor dropped yet (back-pressure counts these). */
    private final AtomicLong pendingEvents = new AtomicLong();
    /** Serialises the writes; fair, so that a run's synchronous flush gets in between two bounded writes. */
    private final ReentrantLock flushLock = new ReentrantLock(true);
    /**
     * Streams held back by {@link #awaitCapacity()} wait on this condition: a lock, not a monitor, so that a
     * waiting virtual thread (Java 21+) releases its carrier on every Java version.
     */
    private final ReentrantLock capacityLock = new ReentrantLock();
    private final Condition capacityFreed = capacityLock.newCondition();
    private final Thread flusher;
    private volatile boolean closed;

    /**
     * Work drained from runs and not yet settled (stored or dealt with), at most one part per run, in drain
     * order. A run with an unsettled part is not drained again until the part is settled, so a part never
     * grows beyond the caps, whatever the store does.
     */
    private final Map<ActiveRun, Part> unsettled = new LinkedHashMap<>();

    /** How a step of the writer ended. */
    private enum Step {
        /** Nothing is left to write now. */
        IDLE,
        /** A transaction was written and more work waits. */
        MORE,
        /** The store refused the write; the work stays unsettled. */
        FAILED
    }

    /** One run's drained work, within the caps; guarded by {@link #flushLock}. */
    private static final class Part {
        final ActiveRun run;
        final StoreBatch batch;
        final RunWrites.Drained drained;
        /** Times this part failed when written on its own. */
        int failures;

        Part(ActiveRun run, StoreBatch batch, RunWrites.Drained drained) {
            this.run = run;
            this.batch = batch;
            this.drained = drained;
        }

        int events() {
            return batch.events().size();
        }

        long bytes() {
            return drained.bytes();
        }
    }

    BatchWriter(EngineContext ctx) {
        this.ctx = ctx;
        this.limits = ctx.limits;
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

    /** Events a run dropped without storing them (it was let go): they no longer hold streams back. */
    void dropped(int events) {
        if (events > 0) {
            release(events);
        }
    }

    /**
     * Stores everything pending now, in bounded transactions, retrying a failing store a few times.
     *
     * @return false if the store kept failing (the work stays pending and is retried later)
     */
    public boolean flushNow() {
        int failures = 0;
        while (true) {
            Step step = stepGuarded();
            if (step == Step.IDLE) {
                return true;
            }
            if (step == Step.FAILED && (++failures >= FLUSH_ATTEMPTS
                    || !StoreRetry.pause(FIRST_RETRY_PAUSE_MILLIS << (failures - 1)))) {
                return false;
            }
        }
    }

    /**
     * Stores everything {@code run} has logged so far, and nothing of other runs: its part in the write in
     * progress (if any) is waited for, then its work is written in transactions of its own, within the caps.
     * Retries a failing store a few times; a part that keeps failing on its own is written row by row, as
     * in the background.
     *
     * @return false if the store kept failing (the work stays pending and is retried later)
     */
    boolean flushRun(ActiveRun run) {
        for (int attempt = 0; attempt < FLUSH_ATTEMPTS; attempt++) {
            if (attempt > 0 && !StoreRetry.pause(FIRST_RETRY_PAUSE_MILLIS << (attempt - 1))) {
                return false;
            }
            flushLock.lock();
            try {
                if (writeRunAlone(run)) {
                    return true;
                }
            } finally {
                flushLock.unlock();
            }
        }
        return false;
    }

    /** @return true once the run has nothing left to store; false when a write failed */
    private boolean writeRunAlone(ActiveRun run) {
        while (true) {
            Part part = unsettled.get(run);
            if (part == null) {
                if (run.isAbandoned()) {
                    return true;
                }
                dirty.remove(run);
                part = drain(run);
                if (part == null) {
                    return true;
                }
            }
            if (!writeEachRun(List.of(part))) {
                return false;
            }
        }
    }

    /** True while too many events wait for the store: {@link #awaitCapacity()} would block. */
    boolean isBacklogged() {
        return pendingEvents.get() > limits.maxPendingEvents();
    }

    /** Blocks the calling stream while too many events wait for the store (back-pressure). */
    void awaitCapacity() {
        if (!isBacklogged()) {
            return;
        }
        LockSupport.unpark(flusher);
        capacityLock.lock();
        try {
            while (isBacklogged() && !closed) {
                try {
                    capacityFreed.await(100, TimeUnit.MILLISECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        } finally {
            capacityLock.unlock();
        }
    }

    private Step stepGuarded() {
        try {
            return step();
        } catch (RuntimeException e) {
            log.error("The batch writer failed", e);
            return Step.FAILED;
        }
    }

    /** One transaction's worth: drains the runs that have no unsettled part, then writes the oldest parts. */
    private Step step() {
        flushLock.lock();
        try {
            boolean backlog = drainDirtyRuns();
            dropAbandoned();
            if (unsettled.isEmpty()) {
                return backlog ? Step.MORE : Step.IDLE;
            }
            List<Part> chunk = nextChunk();
            boolean splitting = chunk.stream().anyMatch(part -> part.failures > 0);
            if (!(!splitting && writeTogether(chunk)) && !writeEachRun(chunk)) {
                return Step.FAILED;
            }
            return backlog || !unsettled.isEmpty() ? Step.MORE : Step.IDLE;
        } finally {
            flushLock.unlock();
        }
    }

    /** @return true if a run still has events beyond the caps (another step is needed at once) */
    private boolean drainDirtyRuns() {
        boolean backlog = false;
        for (ActiveRun run : new ArrayList<>(dirty)) {
            if (unsettled.containsKey(run)) {
                backlog = true;
                continue;
            }
            dirty.remove(run);
            Part part = drain(run);
            backlog |= part != null && part.drained.stillDirty() && run.hasEventsToStore();
        }
        return backlog;
    }

    /** Moves a run's oldest pending work, within the caps, into a new unsettled part (null if it had none). */
    private @Nullable Part drain(ActiveRun run) {
        StoreBatch.Builder builder = StoreBatch.builder().fence(ctx.fence());
        RunWrites.Drained drained = run.drainForFlush(builder, ctx.clock.millis(), limits.maxBatchEvents(),
                limits.maxBatchBytes());
        if (drained.stillDirty()) {
            dirty.add(run);
        }
        StoreBatch batch = builder.build();
        if (batch.isEmpty()) {
            return null;
        }
        Part part = new Part(run, batch, drained);
        unsettled.put(run, part);
        return part;
    }

    /** The oldest unsettled parts that fit in one transaction's caps together (at least one). */
    private List<Part> nextChunk() {
        List<Part> chunk = new ArrayList<>();
        long events = 0;
        long bytes = 0;
        for (Part part : unsettled.values()) {
            if (!chunk.isEmpty() && (events + part.events() > limits.maxBatchEvents()
                    || bytes + part.bytes() > limits.maxBatchBytes())) {
                break;
            }
            chunk.add(part);
            events += part.events();
            bytes += part.bytes();
        }
        return chunk;
    }

    private void dropAbandoned() {
        for (Iterator<Part> parts = unsettled.values().iterator(); parts.hasNext(); ) {
            Part part = parts.next();
            if (part.run.isAbandoned()) {
                parts.remove();
                release(part.batch.events().size());
            }
        }
    }

    /** The common case: the chunk's parts in one transaction. */
    private boolean writeTogether(List<Part> chunk) {
        List<Part> parts = new ArrayList<>(chunk);
        while (true) {
            parts.removeIf(part -> unsettled.get(part.run) != part);
            if (parts.isEmpty()) {
                return true;
            }
            StoreBatch batch;
            if (parts.size() == 1) {
                batch = parts.get(0).batch;
            } else {
                StoreBatch.Builder builder = StoreBatch.builder().fence(ctx.fence());
                parts.forEach(part -> builder.add(part.batch));
                batch = builder.build();
            }
            try {
                ctx.write(batch);
            } catch (LeaseLostException e) {
                loseLeases(e.runIds());
                continue;
            } catch (ThreadGoneException e) {
                dropDeletedThreads(e.runIds());
                continue;
            } catch (RuntimeException e) {
                log.warn("Storing {} events and {} messages of {} run(s) failed; writing each run's part on its own",
                        batch.events().size(), batch.messages().size(), parts.size(), e);
                return false;
            }
            settleAll(parts);
            return true;
        }
    }

    /**
     * After a failure: each part in a transaction of its own, so one run cannot hold up the rest.
     *
     * @return true when every part of {@code parts} is settled
     */
    private boolean writeEachRun(List<Part> parts) {
        List<Part> stored = new ArrayList<>();
        List<Part> failed = new ArrayList<>();
        for (Part part : parts) {
            if (unsettled.get(part.run) != part) {
                continue;
            }
            try {
                ctx.write(part.batch);
                stored.add(part);
            } catch (LeaseLostException e) {
                loseLeases(e.runIds());
            } catch (ThreadGoneException e) {
                dropDeletedThreads(e.runIds());
            } catch (RuntimeException e) {
                part.failures++;
                failed.add(part);
                log.warn("Run {}: storing its part ({} events) failed, {} time(s) on its own", part.run.runId(),
                        part.batch.events().size(), part.failures, e);
            }
        }
        settleAll(stored);
        for (Part part : failed) {
            if (part.failures >= ISOLATE_AFTER && unsettled.get(part.run) == part) {
                isolate(part);
            }
        }
        return parts.stream().noneMatch(part -> unsettled.get(part.run) == part);
    }

    /**
     * Writes a part that keeps failing row by row ({@link RowByRowWrite}): rows the store refuses while it
     * takes the writes around them are left out and the run is failed; if the store takes nothing, the
     * part is kept.
     */
    private void isolate(Part part) {
        RowByRowWrite.Outcome outcome = new RowByRowWrite(ctx).write(part.batch, part.run.runId());
        if (outcome instanceof RowByRowWrite.LeaseLost lost) {
            loseLeases(lost.runIds());
            return;
        }
        if (outcome instanceof RowByRowWrite.ThreadGone gone) {
            dropDeletedThreads(gone.runIds());
            return;
        }
        if (outcome instanceof RowByRowWrite.Kept) {
            log.warn("Run {}: the store did not take its part; keeping it for later", part.run.runId());
            return;
        }
        List<String> refused = ((RowByRowWrite.Settled) outcome).refused();
        if (!refused.isEmpty()) {
            log.error("Run {}: the store refused {} row(s) of it, left out: {}", part.run.runId(), refused.size(),
                    refused);
            part.run.storeRefused(String.join(", ", refused));
        }
        settleAll(List.of(part));
    }

    private void loseLeases(Set<String> runIds) {
        dropUnstoredWork(runIds, "another instance holds its lease", ActiveRun::leaseLost);
    }

    private void dropDeletedThreads(Set<String> runIds) {
        dropUnstoredWork(runIds, "its thread was deleted", ActiveRun::threadGone);
    }

    /** Drops the unsettled parts of these runs (the store will never take them), then tells each run. */
    private void dropUnstoredWork(Set<String> runIds, String why, java.util.function.Consumer<ActiveRun> tell) {
        List<ActiveRun> dropped = new ArrayList<>();
        for (Iterator<Part> parts = unsettled.values().iterator(); parts.hasNext(); ) {
            Part part = parts.next();
            if (runIds.contains(part.run.runId())) {
                parts.remove();
                release(part.batch.events().size());
                log.warn("Run {}: {}; its unstored work is dropped", part.run.runId(), why);
                dropped.add(part.run);
            }
        }
        dropped.forEach(tell);
    }

    private void settleAll(List<Part> parts) {
        if (parts.isEmpty()) {
            return;
        }
        Map<String, Long> progress = new LinkedHashMap<>();
        int events = 0;
        for (Part part : parts) {
            unsettled.remove(part.run, part);
            events += part.batch.events().size();
            part.run.stored(part.drained);
            if (part.drained.lastSeq() > 0) {
                progress.put(part.run.runId(), part.drained.lastSeq());
            }
        }
        if (!progress.isEmpty()) {
            try {
                ctx.coordinator.progressed(progress);
            } catch (RuntimeException e) {
                log.warn("Announcing stored progress to other instances failed; they will catch up", e);
            }
        }
        release(events);
    }

    private void release(int events) {
        if (pendingEvents.addAndGet(-events) <= limits.maxPendingEvents()) {
            wakeHeldStreams();
        }
    }

    private void flushLoop() {
        long interval = limits.eventFlushInterval().toNanos();
        long pause = interval;
        while (!closed) {
            LockSupport.parkNanos(this, pause);
            Step step;
            do {
                step = stepGuarded();
            } while (step == Step.MORE && !closed);
            pause = step == Step.IDLE ? interval
                    : Math.min(TimeUnit.MILLISECONDS.toNanos(MAX_RETRY_PAUSE_MILLIS),
                            Math.max(TimeUnit.MILLISECONDS.toNanos(FIRST_RETRY_PAUSE_MILLIS), pause * 2));
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
        wakeHeldStreams();
    }

    private void wakeHeldStreams() {
        capacityLock.lock();
        try {
            capacityFreed.signalAll();
        } finally {
            capacityLock.unlock();
        }
    }
}
