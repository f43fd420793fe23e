package dev.parley.chat.event;

import java.util.Objects;

/**
 * An {@link AgentStreamEvent} as the engine logged it. {@code seq} numbers a run's events 1, 2, 3 … with
 * no gap and is the reconnect cursor (the SSE {@code id:}); {@code timestamp} is the engine's clock in
 * epoch milliseconds when the event was logged.
 */
public record RunEvent(String runId, long seq, long timestamp, AgentStreamEvent event) {
    public RunEvent {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(event, "event");
        if (seq < 1) {
            throw new IllegalArgumentException("seq starts at 1, got " + seq);
        }
    }

    /** The event's JSON discriminator. */
    public String type() {
        return event.type();
    }
}
