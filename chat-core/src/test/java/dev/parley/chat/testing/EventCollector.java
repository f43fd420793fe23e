package dev.parley.chat.testing;

import dev.parley.chat.event.RunEvent;
import dev.parley.chat.reduce.RunReducer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/** A subscriber that records run events, with a configurable demand, and waits for the end. */
public final class EventCollector implements Flow.Subscriber<RunEvent> {
    private final long initialDemand;
    private final List<RunEvent> events = new CopyOnWriteArrayList<>();
    private final AtomicReference<Throwable> error = new AtomicReference<>();
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile Flow.Subscription subscription;
    private volatile boolean completed;

    private EventCollector(long initialDemand) {
        this.initialDemand = initialDemand;
    }

    /** Requests everything. */
    public static EventCollector unbounded() {
        return new EventCollector(Long.MAX_VALUE);
    }

    /** Requests only {@code n} and never more (unless told to). */
    public static EventCollector requesting(long n) {
        return new EventCollector(n);
    }

    /** Subscribes to a publisher and returns itself. */
    public EventCollector subscribeTo(Flow.Publisher<RunEvent> publisher) {
        publisher.subscribe(this);
        return this;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        subscription = s;
        if (initialDemand > 0) {
            s.request(initialDemand);
        }
    }

    @Override
    public void onNext(RunEvent item) {
        events.add(item);
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

    /** Waits for onComplete or onError; fails the test after the timeout. */
    public EventCollector awaitDone() {
        return awaitDone(20);
    }

    public EventCollector awaitDone(long seconds) {
        try {
            if (!done.await(seconds, TimeUnit.SECONDS)) {
                throw new AssertionError("the subscription did not end within " + seconds + " s; got " + events.size()
                        + " events");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        return this;
    }

    /** Waits until at least {@code count} events arrived. */
    public EventCollector awaitCount(int count) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (events.size() < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("only " + events.size() + " of " + count + " events arrived"
                        + (completed ? " (the subscription completed)" : "")
                        + (error.get() != null ? " (the subscription failed: " + error.get() + ")" : ""));
            }
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
        return this;
    }

    public void request(long n) {
        subscription.request(n);
    }

    public void cancel() {
        subscription.cancel();
    }

    public List<RunEvent> events() {
        return events;
    }

    public boolean completed() {
        return completed;
    }

    public Throwable error() {
        return error.get();
    }

    /** The collected events folded by a fresh reducer. */
    public RunReducer reduced() {
        RunReducer reducer = new RunReducer();
        events.forEach(reducer::apply);
        return reducer;
    }
}
