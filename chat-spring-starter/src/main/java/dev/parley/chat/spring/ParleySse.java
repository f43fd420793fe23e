package dev.parley.chat.spring;

import dev.parley.chat.ChatException;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.spring.internal.Heartbeats;
import dev.parley.chat.spring.internal.SseStreams;
import java.util.concurrent.Flow;
import org.jspecify.annotations.Nullable;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * Turns a run's events into an {@link SseEmitter}, for hosts that write their own controllers:
 *
 * <pre>{@code
 * @GetMapping("/my/runs/{runId}/events")
 * SseEmitter events(@PathVariable String runId, @RequestHeader(name = "Last-Event-ID", required = false) String last,
 *         Principal me) {
 *     return parleySse.emitter(me.getName(), runId, last);
 * }
 * }</pre>
 *
 * Each SSE event has {@code id:} = the event's seq (the reconnect cursor), {@code event:} = its type and
 * {@code data:} = the run event as JSON; heartbeat comments keep idle streams open; the stream ends after
 * the run's terminal event. A client that disconnects never stops the run. Thread-safe.
 */
public final class ParleySse {
    private final ChatEngine engine;
    private final Heartbeats heartbeats;

    public ParleySse(ChatEngine engine, Heartbeats heartbeats) {
        this.engine = engine;
        this.heartbeats = heartbeats;
    }

    /**
     * An emitter streaming the run's events after {@code lastEventId} (null or empty: from the start).
     *
     * @throws ChatException NOT_FOUND for an unknown run or another owner's; INVALID_INPUT for a cursor
     *     that is not a non-negative number — both before anything is streamed
     */
    public SseEmitter emitter(String ownerId, String runId, @Nullable String lastEventId) {
        Flow.Publisher<RunEvent> events = engine.subscribe(ownerId, runId, parseCursor(lastEventId));
        return SseStreams.start(events, heartbeats);
    }

    /** Parses a {@code Last-Event-ID}: null or blank is 0; anything but a non-negative number is INVALID_INPUT. */
    public static long parseCursor(@Nullable String lastEventId) {
        if (lastEventId == null || lastEventId.isBlank()) {
            return 0;
        }
        try {
            long cursor = Long.parseLong(lastEventId.strip());
            if (cursor < 0) {
                throw ChatException.invalidInput("Last-Event-ID must not be negative");
            }
            return cursor;
        } catch (NumberFormatException e) {
            throw ChatException.invalidInput("Last-Event-ID must be a run event's seq, got '" + lastEventId + "'");
        }
    }
}
