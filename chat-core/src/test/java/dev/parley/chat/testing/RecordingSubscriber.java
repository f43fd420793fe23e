package dev.parley.chat.testing;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A subscriber that records what arrives, with a chosen initial demand, and lets a test wait for a count
 * or for the end. {@code S} is the concrete type, so that the waits chain. Thread-safe.
 *
 * @param <T> the items
 * @param <S> the subclass
 */
public abstract class RecordingSubscriber<T, S extends RecordingSubscriber<T, S>> implements Flow.Subscriber<T> {
    private static final long WAIT_SECONDS = 20;

    private final long initialDemand;
    private final List<T> items = new CopyOnWriteArrayList<>();
    private final AtomicReference<Throwable> error = new AtomicReference<>();
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile Flow.Subscription subscription;
    private volatile boolean completed;

    protected RecordingSubscriber(long initialDemand) {
        this.initialDemand = initialDemand;
    }

    @SuppressWarnings("unchecked")
    private S self() {
        return (S) this;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        subscription = s;
        if (initialDemand > 0) {
            s.request(initialDemand);
        }
    }

    @Override
    public void onNext(T item) {
        items.add(item);
    }

    @Override
    public void onError(Throwable t) {
        error.set(t);
        done.countDown();
    }

    @Override
    public void onComplete() {
        completed = true;
        done.countDown();
    }

    /** Waits for onComplete or onError (20 s at most). */
    public S awaitDone() {
        return awaitDone(WAIT_SECONDS);
    }

    /** Waits for onComplete or onError; fails the test after the timeout. */
    public S awaitDone(long seconds) {
        try {
            if (!done.await(seconds, TimeUnit.SECONDS)) {
                throw new AssertionError("the subscription did not end within " + seconds + " s; got " + items.size()
                        + " items");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        return self();
    }

    /** Waits until at least {@code count} items arrived (20 s at most). */
    public S awaitCount(int count) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(WAIT_SECONDS);
        while (items.size() < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("only " + items.size() + " of " + count + " events arrived"
                        + (completed ? " (the subscription completed)" : "")
                        + (error.get() != null ? " (the subscription failed: " + error.get() + ")" : ""));
            }
            sleep(2);
        }
        return self();
    }

    public void request(long n) {
        subscription.request(n);
    }

    public void cancel() {
        subscription.cancel();
    }

    /** What arrived so far, in order (a live view). */
    protected List<T> items() {
        return items;
    }

    public boolean completed() {
        return completed;
    }

    public Throwable error() {
        return error.get();
    }

    /** Sleeps, turning an interrupt into a test failure. */
    public static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
