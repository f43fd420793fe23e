package dev.parley.chat.engine.internal;

import dev.parley.chat.event.RunEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;

/**
 * The live tail of one active run's event log: a ring of its newest events and the subscribers reading
 * it. Events that are not yet stored are never evicted, so ring plus store always cover every event.
 * Subscribers hold only a cursor into this shared log, never a buffer of their own.
 *
 * <p>Thread-safe. {@link #add} runs under the run's lock; {@link #readAfter} from delivery threads.
 */
final class RunLog {
    private final String runId;
    private final int capacity;
    private final Set<LiveSubscription> subscribers = ConcurrentHashMap.newKeySet();

    private RunEvent[] ring;
    private int head;
    private int size;
    /** Every event with a seq up to this one is in the store, not in the ring. */
    private long evictedUpTo;
    private long flushedSeq;
    private volatile long visibleSeq;

    RunLog(String runId, int capacity, long baseSeq) {
        this.runId = runId;
        this.capacity = capacity;
        this.ring = new RunEvent[Math.min(capacity, 64)];
        this.evictedUpTo = baseSeq;
        this.flushedSeq = baseSeq;
        this.visibleSeq = baseSeq;
    }

    String runId() {
        return runId;
    }

    synchronized void add(RunEvent event) {
        if (size == ring.length) {
            if (size >= capacity && ring[head].seq() <= flushedSeq) {
                evictFront();
            } else {
                grow();
            }
        }
        ring[(head + size) % ring.length] = event;
        size++;
    }

    /** Events up to {@code seq} are stored: they may leave the ring once it is over capacity. */
    synchronized void flushed(long seq) {
        if (seq > flushedSeq) {
            flushedSeq = seq;
        }
        while (size > capacity && ring[head].seq() <= flushedSeq) {
            evictFront();
        }
    }

    private void evictFront() {
        evictedUpTo = ring[head].seq();
        ring[head] = null;
        head = (head + 1) % ring.length;
        size--;
    }

    private void grow() {
        RunEvent[] bigger = new RunEvent[ring.length * 2];
        for (int i = 0; i < size; i++) {
            bigger[i] = ring[(head + i) % ring.length];
        }
        ring = bigger;
        head = 0;
    }

    /**
     * Up to {@code max} visible events after {@code cursor}; null when the events right after the
     * cursor already left the ring (read them from the store, up to {@link #evictedUpTo()}).
     */
    synchronized @Nullable List<RunEvent> readAfter(long cursor, int max) {
        if (cursor < evictedUpTo) {
            return null;
        }
        long visible = visibleSeq;
        int low = 0;
        int high = size;
        while (low < high) {
            int mid = (low + high) >>> 1;
            if (ring[(head + mid) % ring.length].seq() <= cursor) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        List<RunEvent> events = new ArrayList<>(Math.min(max, Math.max(0, size - low)));
        for (int i = low; i < size && events.size() < max; i++) {
            RunEvent event = ring[(head + i) % ring.length];
            if (event.seq() > visible) {
                break;
            }
            events.add(event);
        }
        return events;
    }

    synchronized long evictedUpTo() {
        return evictedUpTo;
    }

    long visibleSeq() {
        return visibleSeq;
    }

    /** Makes events up to {@code seq} visible and wakes the subscribers. */
    void publish(long seq) {
        synchronized (this) {
            if (seq > visibleSeq) {
                visibleSeq = seq;
            }
        }
        for (LiveSubscription subscription : subscribers) {
            subscription.signal();
        }
    }

    void attach(LiveSubscription subscription) {
        subscribers.add(subscription);
    }

    void detach(LiveSubscription subscription) {
        subscribers.remove(subscription);
    }

    int subscriberCount() {
        return subscribers.size();
    }
}
