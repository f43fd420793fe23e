package dev.parley.chat.runtime;

import dev.parley.chat.ChatException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cold, single-subscriber {@link Flow.Publisher} fed by a {@link Producer} through an {@link Emitter}, so
 * that adapter authors never hand-roll demand, buffering and cancellation. It follows the Reactive
 * Streams rules (verified by the TCK).
 *
 * <p>On {@code subscribe} the subscriber receives {@code onSubscribe}, then the producer is started on
 * the subscribing thread. The producer typically starts asynchronous work (an HTTP call whose callbacks
 * emit) or hands a blocking loop to an executor; it must not block in {@link Producer#start}.
 *
 * <p>Items the subscriber has not requested yet wait in a buffer of {@code capacity} items; when it is
 * full, {@link Emitter#emit} blocks the producing thread until there is room (back-pressure reaches the
 * socket) or the subscriber cancels. A second subscriber is rejected with {@code onError}.
 *
 * <p>Besides items, a producer may mark its bursts ({@link Emitter#beginBurst()}, for a
 * {@link BurstAwareSubscriber}) and where its stream stands in the runtime ({@link Emitter#resumePoint}, for a
 * {@link ResumableSubscriber}); a subscriber of another type never sees either.
 *
 * @param <T> the item type
 */
public final class StreamPublisher<T> implements Flow.Publisher<T> {

    /** The default buffer capacity. */
    public static final int DEFAULT_CAPACITY = 256;

    /** Starts producing items for one subscriber. */
    @FunctionalInterface
    public interface Producer<T> {
        /**
         * Begins the work. Must not block; may emit synchronously as long as it does not need to wait for
         * demand. An exception thrown here fails the stream.
         */
        void start(Emitter<T> emitter) throws Exception;
    }

    /**
     * The producer's side of the stream. {@code emit}, {@code complete} and {@code fail} may be called
     * from any thread, but not concurrently with each other (the items of one stream have one order).
     */
    public interface Emitter<T> {
        /**
         * Hands over an item. Blocks while the buffer is full and the subscriber has not asked for more.
         * Must not be called from within the subscriber's {@code onNext}.
         *
         * @return false if the item was dropped because the subscriber cancelled or the stream ended
         * @throws NullPointerException if {@code item} is null
         */
        boolean emit(T item);

        /** Ends the stream normally after the buffered items. Later calls are ignored. */
        void complete();

        /** Ends the stream with an error after the buffered items. Later calls are ignored. */
        void fail(Throwable error);

        /**
         * Registers work to undo when the subscriber cancels (close a connection, stop a loop). Runs at
         * most once, on the cancelling thread; runs at once if the subscriber already cancelled. It does
         * not run when the stream ends normally.
         */
        void onCancel(Runnable action);

        /** True once the subscriber cancelled (or broke the protocol); stop producing. */
        boolean isCancelled();

        /**
         * Hints that the items emitted from now on arrive together: the producer has a chunk of input in
         * hand (see {@link BurstAwareSubscriber}). A producer that calls this must call {@link #endBurst()}
         * before it waits for more input, and before it ends the stream. Ignored while a burst is open.
         */
        void beginBurst();

        /**
         * Closes the burst {@link #beginBurst()} opened: the subscriber sees the end after the items emitted
         * so far, or, if it has not asked for all of them yet, as soon as delivery stops for want of demand
         * (the rest then arrive outside the burst). Ignored when no burst is open.
         */
        void endBurst();

        /**
         * Marks where the stream stands in the runtime: a stream re-attached with {@code resumeToken} brings
         * the items emitted after this call (see {@link ResumableSubscriber}). The subscriber sees the mark
         * right after the items emitted before it, and before any emitted after it; a mark it has not seen
         * yet is replaced by a later one made before another item. Never blocks; ignored once the stream
         * ended or the subscriber cancelled, and for a subscriber that is not a {@link ResumableSubscriber}.
         *
         * @throws NullPointerException if {@code resumeToken} is null
         */
        void resumePoint(String resumeToken);
    }

    private static final Logger log = LoggerFactory.getLogger(StreamPublisher.class);

    private final int capacity;
    private final Producer<T> producer;
    private final AtomicBoolean subscribed = new AtomicBoolean();

    private StreamPublisher(int capacity, Producer<T> producer) {
        if (capacity < 1) {
            throw ChatException.configuration("capacity must be at least 1, got " + capacity);
        }
        this.capacity = capacity;
        this.producer = Objects.requireNonNull(producer, "producer");
    }

    /** A publisher with the {@link #DEFAULT_CAPACITY default buffer}. */
    public static <T> StreamPublisher<T> create(Producer<T> producer) {
        return new StreamPublisher<>(DEFAULT_CAPACITY, producer);
    }

    /**
     * A publisher buffering at most {@code capacity} unrequested items.
     *
     * @throws ChatException CONFIGURATION if {@code capacity} is below 1
     */
    public static <T> StreamPublisher<T> create(int capacity, Producer<T> producer) {
        return new StreamPublisher<>(capacity, producer);
    }

    @Override
    public void subscribe(Flow.Subscriber<? super T> subscriber) {
        Objects.requireNonNull(subscriber, "subscriber");
        if (!subscribed.compareAndSet(false, true)) {
            subscriber.onSubscribe(new Flow.Subscription() {
                @Override
                public void request(long n) {
                }

                @Override
                public void cancel() {
                }
            });
            subscriber.onError(new IllegalStateException("this publisher accepts a single subscriber"));
            return;
        }
        Channel<T> channel = new Channel<>(subscriber, capacity);
        subscriber.onSubscribe(channel);
        try {
            producer.start(channel);
        } catch (Exception | LinkageError e) {
            channel.fail(e);
        }
    }

    /** Subscription for the subscriber, emitter for the producer. */
    private static final class Channel<T> implements Flow.Subscription, Emitter<T> {
        private final int capacity;
        private final ReentrantLock lock = new ReentrantLock();
        private final Condition notFull = lock.newCondition();
        private final ArrayDeque<T> queue = new ArrayDeque<>();
        private final AtomicLong requested = new AtomicLong();
        private final AtomicInteger wip = new AtomicInteger();
        private final List<Runnable> cancelActions = new ArrayList<>(1);

        private volatile Flow.@Nullable Subscriber<? super T> subscriber;
        private volatile boolean cancelled;
        private volatile boolean terminated;
        private volatile boolean done;
        private volatile @Nullable Throwable error;
        private volatile @Nullable Throwable protocolError;
        /** The producer's bursts: open or not, and how many it closed. Written by the producer only. */
        private volatile boolean burstOpen;
        private volatile long burstsClosed;
        /** The bursts as the subscriber saw them; touched only inside {@link #drain()}. */
        private boolean burstShown;
        private long burstsClosedShown;
        /** The producer's resume points not yet delivered, oldest first; guarded by {@link #lock}. */
        private final ArrayDeque<Mark> marks = new ArrayDeque<>();
        /** How many marks wait: read without the lock, so that a stream without marks pays nothing. */
        private volatile int markCount;
        /** Items ever queued, and ever taken for delivery; guarded by {@link #lock}. */
        private long queued;
        private long taken;

        /** A resume point: it is due once {@code after} items were taken for delivery. */
        private record Mark(long after, String token) {
        }

        Channel(Flow.Subscriber<? super T> subscriber, int capacity) {
            this.subscriber = subscriber;
            this.capacity = capacity;
        }

        @Override
        public boolean emit(T item) {
            Objects.requireNonNull(item, "a stream item must not be null");
            lock.lock();
            try {
                while (!cancelled && !done && queue.size() >= capacity) {
                    notFull.await();
                }
                if (cancelled || done) {
                    return false;
                }
                queue.add(item);
                queued++;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } finally {
                lock.unlock();
            }
            drain();
            return true;
        }

        @Override
        public void complete() {
            terminate(null);
        }

        @Override
        public void beginBurst() {
            if (!burstOpen && subscriber instanceof BurstAwareSubscriber) {
                burstOpen = true;
            }
        }

        @Override
        public void endBurst() {
            if (burstOpen) {
                burstOpen = false;
                burstsClosed++;
                drain();
            }
        }

        @Override
        public void resumePoint(String resumeToken) {
            Objects.requireNonNull(resumeToken, "resumeToken");
            if (!(subscriber instanceof ResumableSubscriber)) {
                return;
            }
            lock.lock();
            try {
                if (cancelled || done) {
                    return;
                }
                Mark last = marks.peekLast();
                if (last != null && last.after() == queued) {
                    marks.pollLast();
                }
                marks.addLast(new Mark(queued, resumeToken));
                markCount = marks.size();
            } finally {
                lock.unlock();
            }
            drain();
        }

        @Override
        public void fail(Throwable failure) {
            terminate(Objects.requireNonNull(failure, "failure"));
        }

        private void terminate(@Nullable Throwable failure) {
            lock.lock();
            try {
                if (done) {
                    return;
                }
                error = failure;
                done = true;
                notFull.signalAll();
            } finally {
                lock.unlock();
            }
            drain();
        }

        @Override
        public void onCancel(Runnable action) {
            Objects.requireNonNull(action, "action");
            boolean runNow;
            synchronized (cancelActions) {
                if (terminated) {
                    return;
                }
                runNow = cancelled;
                if (!runNow) {
                    cancelActions.add(action);
                }
            }
            if (runNow) {
                runQuietly(action);
            }
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public void request(long n) {
            if (cancelled || terminated) {
                return;
            }
            if (n <= 0) {
                protocolError = new IllegalArgumentException(
                        "Reactive Streams rule 3.9: request must be positive, got " + n);
            } else {
                requested.getAndAccumulate(n, (current, add) -> {
                    long sum = current + add;
                    return sum < 0 ? Long.MAX_VALUE : sum;
                });
            }
            drain();
        }

        @Override
        public void cancel() {
            List<Runnable> actions;
            synchronized (cancelActions) {
                if (cancelled || terminated) {
                    return;
                }
                cancelled = true;
                actions = new ArrayList<>(cancelActions);
                cancelActions.clear();
            }
            lock.lock();
            try {
                queue.clear();
                marks.clear();
                markCount = 0;
                notFull.signalAll();
            } finally {
                lock.unlock();
            }
            subscriber = null;
            for (Runnable action : actions) {
                runQuietly(action);
            }
        }

        private static void runQuietly(Runnable action) {
            try {
                action.run();
            } catch (RuntimeException e) {
                log.warn("A stream's cancel action failed", e);
            }
        }

        /** Delivers what is buffered and requested; one thread at a time, the others leave work for it. */
        private void drain() {
            if (wip.getAndIncrement() != 0) {
                return;
            }
            int missed = 1;
            while (true) {
                long demand = requested.get();
                long emitted = 0;
                while (true) {
                    if (cancelled || terminated) {
                        return;
                    }
                    Throwable broken = protocolError;
                    if (broken != null) {
                        signalTerminal(broken, true);
                        return;
                    }
                    if (emitted == demand) {
                        if (!showDueMark()) {
                            return;
                        }
                        if (done && isEmpty()) {
                            signalTerminal(error, false);
                            return;
                        }
                        break;
                    }
                    boolean finished = done;
                    T item = poll();
                    if (item == null) {
                        if (!showDueMark()) {
                            return;
                        }
                        if (finished) {
                            signalTerminal(error, false);
                            return;
                        }
                        break;
                    }
                    Flow.Subscriber<? super T> target = subscriber;
                    if (target == null) {
                        return;
                    }
                    try {
                        showBurst(target);
                        target.onNext(item);
                    } catch (RuntimeException e) {
                        log.warn("A subscriber threw from onNext or onBurstStart (Reactive Streams rule 2.13); cancelling", e);
                        cancel();
                        return;
                    }
                    emitted++;
                    if (!showDueMark()) {
                        return;
                    }
                }
                if (emitted != 0 && demand != Long.MAX_VALUE) {
                    requested.addAndGet(-emitted);
                }
                Flow.Subscriber<? super T> target = subscriber;
                if (target != null && burstShown && burstsClosedShown != burstsClosed) {
                    try {
                        endShownBurst(target);
                    } catch (RuntimeException e) {
                        log.warn("A subscriber threw from onBurstEnd; cancelling", e);
                        cancel();
                        return;
                    }
                }
                missed = wip.addAndGet(-missed);
                if (missed == 0) {
                    return;
                }
            }
        }

        /**
         * Delivers the newest resume point that is due (every item before it was delivered), if any.
         *
         * @return false if the subscriber threw (the subscription is then cancelled)
         */
        private boolean showDueMark() {
            if (markCount == 0) {
                return true;
            }
            String token = null;
            lock.lock();
            try {
                Mark next;
                while ((next = marks.peekFirst()) != null && next.after() <= taken) {
                    token = marks.pollFirst().token();
                }
                markCount = marks.size();
            } finally {
                lock.unlock();
            }
            Flow.Subscriber<? super T> target = subscriber;
            if (token == null || target == null) {
                return true;
            }
            try {
                ((ResumableSubscriber<? super T>) target).onResumePoint(token);
                return true;
            } catch (RuntimeException e) {
                log.warn("A subscriber threw from onResumePoint; cancelling", e);
                cancel();
                return false;
            }
        }

        /** Before an item: closes the burst the producer closed since, opens the one it opened. */
        private void showBurst(Flow.Subscriber<? super T> target) {
            if (burstShown && burstsClosedShown != burstsClosed) {
                endShownBurst(target);
            }
            if (!burstShown && burstOpen) {
                burstShown = true;
                burstsClosedShown = burstsClosed;
                ((BurstAwareSubscriber<? super T>) target).onBurstStart();
            }
        }

        private void endShownBurst(Flow.Subscriber<? super T> target) {
            burstShown = false;
            burstsClosedShown = burstsClosed;
            ((BurstAwareSubscriber<? super T>) target).onBurstEnd();
        }

        private boolean isEmpty() {
            lock.lock();
            try {
                return queue.isEmpty();
            } finally {
                lock.unlock();
            }
        }

        private @Nullable T poll() {
            lock.lock();
            try {
                T item = queue.poll();
                if (item != null) {
                    taken++;
                    notFull.signal();
                }
                return item;
            } finally {
                lock.unlock();
            }
        }

        private void signalTerminal(@Nullable Throwable failure, boolean cancelUpstream) {
            Flow.Subscriber<? super T> target = subscriber;
            if (cancelUpstream) {
                cancel();
            } else {
                synchronized (cancelActions) {
                    terminated = true;
                    cancelActions.clear();
                }
                subscriber = null;
            }
            if (target == null) {
                return;
            }
            if (burstShown) {
                try {
                    endShownBurst(target);
                } catch (RuntimeException e) {
                    log.warn("A subscriber threw from onBurstEnd", e);
                }
            }
            if (failure == null) {
                target.onComplete();
            } else {
                target.onError(failure);
            }
        }
    }
}
