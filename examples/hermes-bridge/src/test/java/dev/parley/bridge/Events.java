package dev.parley.bridge;

import dev.parley.chat.event.AgentStreamEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** Subscribes to an adapter's stream and keeps its events, so a test can wait for one and act meanwhile. */
final class Events implements Flow.Subscriber<AgentStreamEvent> {
    private final List<AgentStreamEvent> events = new ArrayList<>();
    private boolean complete;
    private Throwable error;

    static Events of(Flow.Publisher<AgentStreamEvent> publisher) {
        Events events = new Events();
        publisher.subscribe(events);
        return events;
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {
        subscription.request(Long.MAX_VALUE);
    }

    @Override
    public synchronized void onNext(AgentStreamEvent item) {
        events.add(item);
        notifyAll();
    }

    @Override
    public synchronized void onError(Throwable throwable) {
        error = throwable;
        complete = true;
        notifyAll();
    }

    @Override
    public synchronized void onComplete() {
        complete = true;
        notifyAll();
    }

    /** Waits for the first event matching {@code condition}. */
    synchronized <T extends AgentStreamEvent> T await(Class<T> type, Predicate<T> condition) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (true) {
            for (AgentStreamEvent event : events) {
                if (type.isInstance(event) && condition.test(type.cast(event))) {
                    return type.cast(event);
                }
            }
            long left = deadline - System.nanoTime();
            if (complete || left <= 0) {
                throw new AssertionError("no matching " + type.getSimpleName() + " in " + events, error);
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
    }

    <T extends AgentStreamEvent> T await(Class<T> type) throws InterruptedException {
        return await(type, e -> true);
    }

    /** Every event, once the stream completed. */
    synchronized List<AgentStreamEvent> all() throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!complete) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("the stream did not complete: " + events);
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        if (error != null) {
            throw new AssertionError("the stream failed", error);
        }
        return List.copyOf(events);
    }

    <T extends AgentStreamEvent> List<T> of(Class<T> type) throws InterruptedException {
        return all().stream().filter(type::isInstance).map(type::cast).toList();
    }
}
