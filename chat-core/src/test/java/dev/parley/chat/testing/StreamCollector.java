package dev.parley.chat.testing;

import dev.parley.chat.event.AgentStreamEvent;
import java.util.List;
import java.util.concurrent.Flow;

/** Subscribes to a runtime adapter's stream with a chosen demand and records what arrives. Thread-safe. */
public final class StreamCollector extends RecordingSubscriber<AgentStreamEvent, StreamCollector> {
    private StreamCollector(long initialDemand) {
        super(initialDemand);
    }

    public static StreamCollector unbounded() {
        return new StreamCollector(Long.MAX_VALUE);
    }

    public static StreamCollector requesting(long n) {
        return new StreamCollector(n);
    }

    /** Subscribes, waits for the end and returns the events; fails if the stream broke its contract. */
    public static List<AgentStreamEvent> collect(Flow.Publisher<AgentStreamEvent> publisher) {
        StreamCollector collector = unbounded();
        publisher.subscribe(collector);
        return collector.awaitDone().assertContract().events();
    }

    /** Completed normally, with exactly one terminal event, and it is the last one. */
    public StreamCollector assertContract() {
        if (error() != null) {
            throw new AssertionError("the stream failed instead of ending with a terminal event", error());
        }
        if (!completed()) {
            throw new AssertionError("the stream did not complete");
        }
        List<AgentStreamEvent> events = events();
        long terminals = events.stream().filter(AgentStreamEvent::isTerminal).count();
        if (terminals != 1 || !events.get(events.size() - 1).isTerminal()) {
            throw new AssertionError("expected exactly one terminal event, last; got " + events);
        }
        return this;
    }

    public List<AgentStreamEvent> events() {
        return items();
    }

    public AgentStreamEvent last() {
        List<AgentStreamEvent> events = events();
        return events.get(events.size() - 1);
    }
}
