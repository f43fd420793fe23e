package dev.parley.chat.spring;

import dev.parley.chat.ChatException;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.spring.internal.SseResponses;
import dev.parley.chat.spring.internal.SseStreams;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.Flow;
import org.jspecify.annotations.Nullable;

/**
 * Streams a run's events as a servlet SSE response, for hosts that write their own controllers:
 *
 * <pre>{@code
 * @GetMapping("/my/runs/{runId}/events")
 * void events(@PathVariable String runId, @RequestHeader(name = "Last-Event-ID", required = false) String last,
 *         Principal me, HttpServletRequest request, HttpServletResponse response) {
 *     parleySse.stream(request, response, me.getName(), runId, last);
 * }
 * }</pre>
 *
 * Each SSE event has {@code id:} = the event's seq (the reconnect cursor), {@code event:} = its type and
 * {@code data:} = the run event as JSON; heartbeat comments keep idle streams open; the stream ends after
 * the run's terminal event. A client that disconnects never stops the run.
 *
 * <p>The response is written with the container's non-blocking output (Servlet 3.1+ {@code WriteListener}):
 * no thread waits for a slow client, and an idle stream holds no thread. A client that takes no data for
 * {@code parley.web.stream-write-timeout}, or falls more than {@code parley.web.stream-buffer-size} behind,
 * has its stream cut (the response completes) and reconnects with its cursor. Thread-safe.
 */
public final class ParleySse {
    private final ChatEngine engine;
    private final SseStreams streams;

    public ParleySse(ChatEngine engine, SseStreams streams) {
        this.engine = engine;
        this.streams = streams;
    }

    /**
     * Answers {@code request} with the run's events after {@code lastEventId} (null or empty: from the
     * start). Returns at once: the request goes asynchronous and is written as events come.
     *
     * @throws ChatException NOT_FOUND for an unknown run or another owner's; INVALID_INPUT for a cursor
     *     that is not a non-negative number — both before anything is written to the response
     * @throws IllegalStateException if the request does not support asynchronous processing (a filter or
     *     servlet in its chain is not {@code asyncSupported})
     * @throws UncheckedIOException if the response's output cannot be opened
     */
    public void stream(HttpServletRequest request, HttpServletResponse response, String ownerId, String runId,
            @Nullable String lastEventId) {
        Flow.Publisher<RunEvent> events = engine.subscribe(ownerId, runId, parseCursor(lastEventId));
        try {
            SseResponses.start(request, response, events, streams);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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
