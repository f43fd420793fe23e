package dev.parley.chat.hermes;

import dev.parley.chat.event.AgentStreamEvent;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/** Subscribes to an adapter stream with a chosen demand and records what arrives. */
final class StreamCollector implements Flow.Subscriber<AgentStreamEvent> {
    private final long initialDemand;
    private final List<AgentStreamEvent> events = new CopyOnWriteArrayList<>();
    private final AtomicReference<Throwable> error = new AtomicReference<>();
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile Flow.Subscription subscription;
    private volatile boolean completed;

    private StreamCollector(long initialDemand) {
        this.initialDemand = initialDemand;
    }

    static StreamCollector unbounded() {
        return new StreamCollector(Long.MAX_VALUE);
    }

    static StreamCollector requesting(long n) {
        return new StreamCollector(n);
    }

    /** Subscribes, waits for the end and returns the events; fails if the stream broke its contract. */
    static List<AgentStreamEvent> collect(Flow.Publisher<AgentStreamEvent> publisher) {
        StreamCollector collector = unbounded();
        publisher.subscribe(collector);
        return collector.awaitDone().assertContract().events();
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        subscription = s;
        s.request(initialDemand);
    }

    @Override
    public void onNext(AgentStreamEvent item) {
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

    StreamCollector awaitDone() {
        try {
            if (!done.await(20, TimeUnit.SECONDS)) {
                throw new AssertionError("the stream did not end within 20 s; got " + events);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
        return this;
    }

    StreamCollector awaitCount(int count) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (events.size() < count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("only " + events.size() + " of " + count + " events arrived: " + events);
            }
            sleep(5);
        }
        return this;
    }

    /** Completed normally, with exactly one terminal event, and it is the last one. */
    StreamCollector assertContract() {
        if (error.get() != null) {
            throw new AssertionError("the stream failed instead of ending with a terminal event", error.get());
        }
        if (!completed) {
            throw new AssertionError("the stream did not complete");
        }
        long terminals = events.stream().filter(AgentStreamEvent::isTerminal).count();
        if (terminals != 1 || !events.get(events.size() - 1).isTerminal()) {
            throw new AssertionError("expected exactly one terminal event, last; got " + events);
        }
        return this;
    }

    void request(long n) {
        subscription.request(n);
    }

    void cancel() {
        subscription.cancel();
    }

    List<AgentStreamEvent> events() {
        return events;
    }

    AgentStreamEvent last() {
        return events.get(events.size() - 1);
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
