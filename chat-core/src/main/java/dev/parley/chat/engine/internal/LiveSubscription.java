package dev.parley.chat.engine.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.engine.BatchingSubscriber;
import dev.parley.chat.engine.SlowConsumerException;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.Run;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One subscriber's view of a run's events: everything after its cursor, replayed from the store or the
 * ring, then live until the terminal event — no gap, no duplicate, because it only ever asks for "the
 * events after the last seq I delivered". It holds no buffer: while it keeps up it reads the shared
 * ring; if it falls more than the lag limit behind a live run it is cut off with its cursor.
 *
 * <p>Signals go out on the engine's delivery threads, never on the runtime's stream thread, and never
 * two at once. There is no thread per subscriber: a drain task runs only when there is something to do.
 */
final class LiveSubscription implements Flow.Subscription {
    private static final Logger log = LoggerFactory.getLogger(LiveSubscription.class);
    private static final int DELIVERY_BATCH = 256;
    private static final long IDLE_POLL_MILLIS = 500;
    /** With other instances, progress notices wake subscribers; polling is only the safety net. */
    private static final long CLUSTER_POLL_MILLIS = 2_000;

    private final EngineContext ctx;
    private final String runId;
    private final AtomicLong demand = new AtomicLong();
    private final AtomicInteger wip = new AtomicInteger();
    private final AtomicBoolean closed = new AtomicBoolean();

    private volatile Flow.@Nullable Subscriber<? super RunEvent> subscriber;
    private volatile @Nullable RunLog runLog;
    private volatile boolean cancelled;
    private volatile boolean done;
    private volatile @Nullable Throwable protocolError;
    /** Set when the engine closes: the subscriber is told, to subscribe again elsewhere from its cursor. */
    private volatile boolean engineClosed;
    /** The seq of the last event delivered; touched only inside {@link #drain()}. */
    private long cursor;
    /** {@link #cursor} as other threads see it, after each delivered batch. */
    private volatile long readUpTo;
    private boolean pollScheduled;

    LiveSubscription(EngineContext ctx, String runId, long afterSeq, Flow.Subscriber<? super RunEvent> subscriber) {
        this.ctx = ctx;
        this.runId = runId;
        this.cursor = afterSeq;
        this.readUpTo = afterSeq;
        this.subscriber = subscriber;
    }

    /** Called once the subscriber has its subscription. */
    void start() {
        ctx.subscriptions.add(this);
        if (ctx.isClosed()) {
            engineClosing();
        }
        ctx.listener.subscriberOpened(runId);
        ActiveRun run = ctx.activeRuns.get(runId);
        if (run != null && !run.log().isAbandoned()) {
            attach(run.log());
        }
        schedule();
    }

    private void attach(RunLog target) {
        runLog = target;
        target.attach(this);
        if (target.isAbandoned()) {
            logAbandoned(target);
        }
    }

    /** The run's log here was abandoned (another instance holds the run now): read on from the store. */
    void logAbandoned(RunLog target) {
        if (runLog == target) {
            runLog = null;
            target.detach(this);
        }
        schedule();
    }

    @Override
    public void request(long n) {
        if (n <= 0) {
            protocolError = new IllegalArgumentException("Reactive Streams rule 3.9: request must be positive, got " + n);
        } else {
            demand.getAndAccumulate(n, (current, add) -> {
                long sum = current + add;
                return sum < 0 ? Long.MAX_VALUE : sum;
            });
        }
        schedule();
    }

    @Override
    public void cancel() {
        if (!cancelled) {
            cancelled = true;
            close();
        }
    }

    /** The seq of the last event this subscriber was handed (updated once per delivered batch). */
    long readUpTo() {
        return readUpTo;
    }

    /** Another instance stored new events of the run (or notices may have been lost): read them. */
    void wake() {
        if (!done && !cancelled) {
            schedule();
        }
    }

    /**
     * The engine is closing: the subscriber gets an error (RUNTIME_UNAVAILABLE, with its cursor in the message)
     * on a delivery thread, and may subscribe again from its cursor on another instance or a new engine.
     */
    void engineClosing() {
        engineClosed = true;
        schedule();
    }

    /** New events are visible in the log. Called on the appending thread: must stay cheap. */
    void signal() {
        if (done || cancelled) {
            return;
        }
        if (demand.get() > 0) {
            schedule();
            return;
        }
        RunLog target = runLog;
        if (target != null && target.visibleSeq() - cursor > ctx.limits.subscriberLagLimit()) {
            schedule();
        }
    }

    private void schedule() {
        if (wip.getAndIncrement() == 0) {
            try {
                ctx.delivery.execute(this::drain);
            } catch (RuntimeException e) {
                wip.set(0);
                terminate(new ChatException(ErrorCode.INTERNAL, "the engine is shutting down", e));
            }
        }
    }

    private void drain() {
        int missed = 1;
        while (true) {
            if (cancelled || done) {
                return;
            }
            Throwable broken = protocolError;
            if (broken != null) {
                terminate(broken);
                return;
            }
            long wanted = demand.get();
            if (wanted == 0 && engineClosed) {
                terminateClosed();
                return;
            }
            if (wanted == 0) {
                RunLog target = runLog;
                if (target != null && target.visibleSeq() - cursor > ctx.limits.subscriberLagLimit()) {
                    terminate(new SlowConsumerException(runId, cursor));
                    return;
                }
            } else {
                Fetch fetch;
                try {
                    fetch = fetch((int) Math.min(wanted, DELIVERY_BATCH));
                } catch (RuntimeException e) {
                    terminate(e instanceof ChatException ? e
                            : new ChatException(ErrorCode.STORE_FAILURE, "reading the run's events failed", e));
                    return;
                }
                if (!fetch.events.isEmpty()) {
                    if (deliver(fetch.events)) {
                        return;
                    }
                    continue;
                }
                if (fetch.finished) {
                    terminate(null);
                    return;
                }
                if (engineClosed) {
                    terminateClosed();
                    return;
                }
                if (fetch.poll) {
                    schedulePoll();
                }
            }
            missed = wip.addAndGet(-missed);
            if (missed == 0) {
                return;
            }
        }
    }

    private void terminateClosed() {
        terminate(new ChatException(ErrorCode.RUNTIME_UNAVAILABLE, "the engine closed; subscribe to run " + runId
                + " again after seq " + cursor));
    }

    /** @return true when the terminal event was delivered (the subscription is over) */
    private boolean deliver(List<RunEvent> events) {
        Flow.Subscriber<? super RunEvent> target = subscriber;
        for (RunEvent event : events) {
            if (cancelled || target == null) {
                return true;
            }
            try {
                target.onNext(event);
            } catch (RuntimeException e) {
                log.warn("A subscriber of run {} threw from onNext; cancelling it", runId, e);
                cancel();
                return true;
            }
            cursor = event.seq();
            if (demand.get() != Long.MAX_VALUE) {
                demand.decrementAndGet();
            }
            if (event.event().isTerminal()) {
                terminate(null);
                return true;
            }
        }
        readUpTo = cursor;
        if (target instanceof BatchingSubscriber<?> batching && !cancelled) {
            try {
                batching.onBatchEnd();
            } catch (RuntimeException e) {
                log.warn("A subscriber of run {} threw from onBatchEnd; cancelling it", runId, e);
                cancel();
                return true;
            }
        }
        return false;
    }

    private static final class Fetch {
        static final Fetch WAIT = new Fetch(List.of(), false, false);
        static final Fetch FINISHED = new Fetch(List.of(), true, false);
        static final Fetch POLL = new Fetch(List.of(), false, true);

        final List<RunEvent> events;
        final boolean finished;
        final boolean poll;

        Fetch(List<RunEvent> events, boolean finished, boolean poll) {
            this.events = events;
            this.finished = finished;
            this.poll = poll;
        }
    }

    private Fetch fetch(int max) {
        RunLog target = runLog;
        if (target == null) {
            ActiveRun run = ctx.activeRuns.get(runId);
            if (run != null && !run.log().isAbandoned()) {
                attach(run.log());
                target = runLog;
            }
        }
        if (target != null) {
            List<RunEvent> live = target.readAfter(cursor, max);
            if (live != null) {
                if (live.isEmpty() && target.isOverFor(cursor)) {
                    // subscribed after the end, while the run was still leaving memory: no signal would come
                    return Fetch.FINISHED;
                }
                return live.isEmpty() ? Fetch.WAIT : new Fetch(live, false, false);
            }
            List<RunEvent> stored = ctx.store.readEvents(runId, cursor, Math.min(max, ctx.limits.replayPageSize()));
            if (!stored.isEmpty()) {
                return new Fetch(stored, false, false);
            }
            // nothing stored between the cursor and the ring: the seqs jumped (a restart); read on from the ring
            cursor = Math.max(cursor, target.evictedUpTo());
            List<RunEvent> after = target.readAfter(cursor, max);
            return after == null || after.isEmpty() ? Fetch.WAIT : new Fetch(after, false, false);
        }
        List<RunEvent> stored = ctx.store.readEvents(runId, cursor, Math.min(max, ctx.limits.replayPageSize()));
        if (!stored.isEmpty()) {
            return new Fetch(stored, false, false);
        }
        Optional<Run> run = ctx.store.findRun(runId);
        if (run.isEmpty()) {
            return Fetch.FINISHED;
        }
        if (run.get().status().isTerminal()) {
            // the run's end may have been committed between the two reads: its events are stored with it
            stored = ctx.store.readEvents(runId, cursor, Math.min(max, ctx.limits.replayPageSize()));
            return stored.isEmpty() ? Fetch.FINISHED : new Fetch(stored, false, false);
        }
        ctx.remoteTails.computeIfAbsent(runId, k -> java.util.concurrent.ConcurrentHashMap.newKeySet()).add(this);
        return Fetch.POLL;
    }

    /** The run is not active here and not over: look again shortly (it may be queued or elsewhere). */
    private void schedulePoll() {
        if (pollScheduled) {
            return;
        }
        pollScheduled = true;
        ctx.timers.schedule(() -> {
            pollScheduled = false;
            schedule();
        }, ctx.clustered() ? CLUSTER_POLL_MILLIS : IDLE_POLL_MILLIS, TimeUnit.MILLISECONDS);
    }

    private void terminate(@Nullable Throwable error) {
        if (done) {
            return;
        }
        done = true;
        Flow.Subscriber<? super RunEvent> target = subscriber;
        close();
        if (target == null || cancelled) {
            return;
        }
        if (error == null) {
            target.onComplete();
        } else {
            target.onError(error);
        }
    }

    private void close() {
        ctx.subscriptions.remove(this);
        RunLog target = runLog;
        if (target != null) {
            target.detach(this);
        }
        ctx.remoteTails.computeIfPresent(runId, (id, waiting) -> {
            waiting.remove(this);
            return waiting.isEmpty() ? null : waiting;
        });
        subscriber = null;
        if (closed.compareAndSet(false, true)) {
            ctx.listener.subscriberClosed(runId);
        }
    }
}
