package dev.parley.simulation;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.Delayed;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Time that passes only when the simulation says so: a {@link Clock} and a {@link ScheduledExecutorService}
 * that share one virtual "now". A task runs when {@link #advance} moves now past its due time, on the thread
 * that advances, in due-time order (ties in the order they were scheduled). The engine under test gets both
 * ({@code ChatEngine.Builder.clock} and {@code scheduler}), so its deadlines, grace periods, leases and polls
 * follow the simulation's time. Thread-safe.
 */
final class VirtualTime {
    private final Object lock = new Object();
    private final PriorityQueue<Task<?>> queue = new PriorityQueue<>(VirtualTime::earlier);
    private long now;
    private long sequence;
    private final Clock clock = new VirtualClock();
    private final Scheduler scheduler = new Scheduler();

    VirtualTime(Instant start) {
        this.now = start.toEpochMilli();
    }

    Clock clock() {
        return clock;
    }

    ScheduledExecutorService scheduler() {
        return scheduler;
    }

    long millis() {
        synchronized (lock) {
            return now;
        }
    }

    /**
     * Moves now forward by {@code millis}, running every task that falls due on the way, each at its due time.
     * Tasks run on the calling thread; a task scheduled by a task runs in the same advance if it falls due.
     */
    void advance(long millis) {
        long target;
        synchronized (lock) {
            target = now + millis;
        }
        while (true) {
            Task<?> next;
            synchronized (lock) {
                next = queue.peek();
                if (next == null || next.due > target) {
                    now = Math.max(now, target);
                    return;
                }
                queue.poll();
                now = Math.max(now, next.due);
            }
            next.runOnce();
        }
    }

    /** How many tasks wait (periodic ones included). */
    int pending() {
        synchronized (lock) {
            return queue.size();
        }
    }

    /** Due time first, then the order of scheduling. */
    private static int earlier(Task<?> a, Task<?> b) {
        int byDue = Long.compare(a.due, b.due);
        return byDue != 0 ? byDue : Long.compare(a.order, b.order);
    }

    private <V> Task<V> enqueue(Callable<V> work, long delayMillis, long periodMillis) {
        synchronized (lock) {
            Task<V> task = new Task<>(work, now + Math.max(0, delayMillis), periodMillis, sequence++);
            queue.add(task);
            return task;
        }
    }

    private final class VirtualClock extends Clock {
        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public long millis() {
            return VirtualTime.this.millis();
        }

        @Override
        public Instant instant() {
            return Instant.ofEpochMilli(millis());
        }
    }

    /** One scheduled piece of work: a one-shot, or periodic (fixed rate above 0, fixed delay below 0). */
    private final class Task<V> implements ScheduledFuture<V> {
        private final Callable<V> work;
        private final long period;
        private long due;
        private long order;
        private volatile boolean cancelled;
        private volatile boolean done;
        private V result;
        private Throwable failure;

        Task(Callable<V> work, long due, long period, long order) {
            this.work = work;
            this.due = due;
            this.period = period;
            this.order = order;
        }

        void runOnce() {
            if (cancelled) {
                return;
            }
            try {
                V value = work.call();
                if (period == 0) {
                    result = value;
                    done = true;
                }
            } catch (Throwable e) {
                failure = e;
                done = true;
                return;
            }
            if (period != 0 && !cancelled) {
                synchronized (lock) {
                    due = period > 0 ? due + period : now - period;
                    order = sequence++;
                    queue.add(this);
                }
            }
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(due - millis(), TimeUnit.MILLISECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            return Long.compare(getDelay(TimeUnit.MILLISECONDS), other.getDelay(TimeUnit.MILLISECONDS));
        }

        @Override
        public boolean cancel(boolean mayInterruptIfRunning) {
            if (done) {
                return false;
            }
            cancelled = true;
            synchronized (lock) {
                queue.remove(this);
            }
            return true;
        }

        @Override
        public boolean isCancelled() {
            return cancelled;
        }

        @Override
        public boolean isDone() {
            return done || cancelled;
        }

        @Override
        public V get() throws ExecutionException {
            if (cancelled) {
                throw new CancellationException();
            }
            if (!done) {
                throw new IllegalStateException("virtual-time tasks are not waited for; advance the time");
            }
            if (failure != null) {
                throw new ExecutionException(failure);
            }
            return result;
        }

        @Override
        public V get(long timeout, TimeUnit unit) throws ExecutionException, TimeoutException {
            if (!done && !cancelled) {
                throw new TimeoutException();
            }
            return get();
        }
    }

    /** The scheduler side; execute() runs at the next advance. */
    private final class Scheduler extends AbstractExecutorService implements ScheduledExecutorService {
        private volatile boolean shutdown;

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            return enqueue(() -> {
                command.run();
                return null;
            }, unit.toMillis(delay), 0);
        }

        @Override
        public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
            return enqueue(callable, unit.toMillis(delay), 0);
        }

        @Override
        public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
            return enqueue(() -> {
                command.run();
                return null;
            }, unit.toMillis(initialDelay), Math.max(1, unit.toMillis(period)));
        }

        @Override
        public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay,
                TimeUnit unit) {
            return enqueue(() -> {
                command.run();
                return null;
            }, unit.toMillis(initialDelay), -Math.max(1, unit.toMillis(delay)));
        }

        @Override
        public void execute(Runnable command) {
            schedule(command, 0, TimeUnit.MILLISECONDS);
        }

        @Override
        public void shutdown() {
            shutdown = true;
        }

        @Override
        public List<Runnable> shutdownNow() {
            shutdown = true;
            return new ArrayList<>();
        }

        @Override
        public boolean isShutdown() {
            return shutdown;
        }

        @Override
        public boolean isTerminated() {
            return shutdown;
        }

        @Override
        public boolean awaitTermination(long timeout, TimeUnit unit) {
            return true;
        }
    }
}
