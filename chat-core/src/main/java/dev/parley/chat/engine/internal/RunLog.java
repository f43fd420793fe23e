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
 * <p>The ring keeps about {@code capacity} stored events, and more while a subscriber reading from it is
 * behind: a stored event leaves only once every such subscriber has read it, or once the ring holds
 * {@code readerCapacity} events. A subscriber that falls a little behind (a busy machine, a slow moment on
 * its connection) so catches up from memory rather than from the store; one that falls further behind
 * reads the store, as a new subscriber replaying an old run does.
 *
 * <p>While the runtime is inside a burst ({@link #holdSignals}) newly visible events do not wake the
 * subscribers one by one: they are woken once at the burst's end, or after {@link #MAX_HELD} events,
 * whichever comes first. Subscribers already reading pick the events up as they become visible.
 *
 * <p>Thread-safe. {@link #add} runs under the run's lock; {@link #readAfter} from delivery threads.
 */
final class RunLog {
    /** The most events a burst keeps subscribers from seeing before they are woken anyway. */
    static final int MAX_HELD = 64;

    private final String runId;
    private final int capacity;
    private final int readerCapacity;
    /** How far below the capacity a trim goes, so that subscribers' cursors are looked at once per this many events. */
    private final int trimSlack;
    private final Set<LiveSubscription> subscribers = ConcurrentHashMap.newKeySet();
    private volatile boolean abandoned;
    /** The seq of the run's terminal event once logged, else 0. Guarded by this. */
    private long endSeq;

    private RunEvent[] ring;
    private int head;
    private int size;
    /** Every event with a seq up to this one is in the store, not in the ring. */
    private long evictedUpTo;
    private long flushedSeq;
    private volatile long visibleSeq;
    private boolean holding;
    /** Events made visible while holding, since the subscribers were last woken. */
    private int held;

    /**
     * @param capacity the stored events the ring keeps
     * @param readerCapacity the most events it keeps for subscribers that are behind (at least {@code capacity})
     */
    RunLog(String runId, int capacity, int readerCapacity, long baseSeq) {
        this.runId = runId;
        this.capacity = capacity;
        this.readerCapacity = Math.max(capacity, readerCapacity);
        this.trimSlack = Math.max(1, capacity / 8);
        this.ring = new RunEvent[Math.min(capacity, 64)];
        this.evictedUpTo = baseSeq;
        this.flushedSeq = baseSeq;
        this.visibleSeq = baseSeq;
    }

    String runId() {
        return runId;
    }

    synchronized void add(RunEvent event) {
        if (event.event().isTerminal()) {
            endSeq = event.seq();
        }
        if (size == ring.length) {
            if (size >= capacity) {
                trim(capacity - trimSlack);
            }
            if (size == ring.length) {
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
        if (size > capacity) {
            trim(capacity);
        }
    }

    /**
     * Evicts stored events from the front down to {@code target} events, keeping those a subscriber reading
     * from the ring has not read yet unless the ring holds {@code readerCapacity}.
     */
    private void trim(int target) {
        long unread = oldestUnread();
        while (size > target && ring[head].seq() <= flushedSeq
                && (ring[head].seq() <= unread || size >= readerCapacity)) {
            evictFront();
        }
    }

    /** The seq up to which every subscriber reading from the ring has read (MAX_VALUE with none). */
    private long oldestUnread() {
        long oldest = Long.MAX_VALUE;
        for (LiveSubscription subscription : subscribers) {
            long read = subscription.readUpTo();
            if (read >= evictedUpTo && read < oldest) {
                oldest = read;
            }
        }
        return oldest;
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

    /**
     * True if a reader at {@code cursor} has nothing more to read: the run's end is visible and the cursor is at
     * or past it (a subscriber that started after the end, e.g. from a state read as the run ended).
     */
    synchronized boolean isOverFor(long cursor) {
        return endSeq > 0 && visibleSeq >= endSeq && cursor >= endSeq;
    }

    synchronized long evictedUpTo() {
        return evictedUpTo;
    }

    long visibleSeq() {
        return visibleSeq;
    }

    /** Makes events up to {@code seq} visible and wakes the subscribers. */
    void publish(long seq) {
        publish(seq, false);
    }

    /**
     * Makes events up to {@code seq} visible and wakes the subscribers, unless the event may wait for the
     * end of the runtime's burst ({@code holdable}) and one is open.
     */
    void publish(long seq, boolean holdable) {
        boolean wake;
        synchronized (this) {
            if (seq > visibleSeq) {
                visibleSeq = seq;
            }
            wake = !holdable || !holding || ++held >= MAX_HELD;
            if (wake) {
                held = 0;
            }
        }
        if (wake) {
            wakeSubscribers();
        }
    }

    /** The runtime's burst began: hold back waking the subscribers for holdable events. */
    synchronized void holdSignals() {
        holding = true;
    }

    /** The runtime's burst ended: wake the subscribers if events became visible meanwhile. */
    void releaseSignals() {
        synchronized (this) {
            holding = false;
        }
        showHeld();
    }

    /** Wakes the subscribers for the events held so far, without ending the burst (before a wait). */
    void showHeld() {
        boolean wake;
        synchronized (this) {
            wake = held > 0;
            held = 0;
        }
        if (wake) {
            wakeSubscribers();
        }
    }

    private void wakeSubscribers() {
        for (LiveSubscription subscription : subscribers) {
            subscription.signal();
        }
    }

    /**
     * This process let the run go (another instance holds it now): the subscribers stop reading this log and
     * follow the run from the store, where the new holder writes it.
     */
    void abandon() {
        abandoned = true;
        for (LiveSubscription subscription : subscribers) {
            subscription.logAbandoned(this);
        }
        subscribers.clear();
    }

    boolean isAbandoned() {
        return abandoned;
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
