package dev.parley.chat.engine.internal;

import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One lane per busy thread: the run that holds it and the runs queued behind it. A thread with no run
 * has no lane. Thread-safe (one lock; every operation is short).
 */
final class ThreadLanes {
    private final Map<String, Lane> lanes = new HashMap<>();

    private static final class Lane {
        @Nullable ActiveRun current;
        final Deque<ActiveRun> queued = new ArrayDeque<>();
    }

    /** The run holding the thread, or null when it is free. */
    synchronized @Nullable ActiveRun current(String threadId) {
        Lane lane = lanes.get(threadId);
        return lane == null ? null : lane.current;
    }

    synchronized boolean isBusy(String threadId) {
        return lanes.containsKey(threadId);
    }

    /** Makes {@code run} the thread's current run; the caller checked that the thread is free. */
    synchronized void occupy(String threadId, ActiveRun run) {
        Lane lane = lanes.computeIfAbsent(threadId, k -> new Lane());
        lane.current = run;
    }

    /** Queues a run behind the current one and the runs queued before it: runs start in arrival order. */
    synchronized void enqueue(String threadId, ActiveRun run) {
        lanes.computeIfAbsent(threadId, k -> new Lane()).queued.addLast(run);
    }

    /** Removes a queued run (it was cancelled before it started); false if it was not queued. */
    synchronized boolean dequeue(String threadId, ActiveRun run) {
        Lane lane = lanes.get(threadId);
        return lane != null && lane.queued.remove(run);
    }

    /**
     * A run left its thread: it ended, or this instance let it go. If it held the thread, the next queued
     * run becomes current and is returned (the caller launches it; null when nothing waits, and the lane is
     * gone). If it was queued, it leaves the queue, so that it never becomes the current run once ended.
     */
    synchronized @Nullable ActiveRun release(String threadId, ActiveRun finished) {
        Lane lane = lanes.get(threadId);
        if (lane == null) {
            return null;
        }
        if (lane.current != finished) {
            lane.queued.remove(finished);
            return null;
        }
        ActiveRun next = lane.queued.pollFirst();
        lane.current = next;
        if (next == null) {
            lanes.remove(threadId);
        }
        return next;
    }
}
