package dev.parley.chat.testing;

import dev.parley.chat.event.RunEvent;
import dev.parley.chat.reduce.RunReducer;
import java.util.List;
import java.util.concurrent.Flow;

/** A subscriber that records run events, with a configurable demand, and waits for the end. */
public final class EventCollector extends RecordingSubscriber<RunEvent, EventCollector> {
    private EventCollector(long initialDemand) {
        super(initialDemand);
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

    public List<RunEvent> events() {
        return items();
    }

    /** The collected events folded by a fresh reducer. */
    public RunReducer reduced() {
        RunReducer reducer = new RunReducer();
        events().forEach(reducer::apply);
        return reducer;
    }
}
