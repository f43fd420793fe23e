package dev.parley.chat.spring.internal;

import dev.parley.chat.event.RunEvent;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.concurrent.Flow;

/** Starts SSE responses for run event publishers. */
public final class SseResponses {
    private SseResponses() {
    }

    /**
     * Makes {@code response} an asynchronous SSE response fed by {@code events}, written without blocking
     * (see {@code SseRunStream}); the calling request thread returns at once.
     *
     * @throws IOException if the response's output cannot be opened
     * @throws IllegalStateException if the request does not support asynchronous processing
     */
    public static void start(HttpServletRequest request, HttpServletResponse response, Flow.Publisher<RunEvent> events,
            SseStreams streams) throws IOException {
        SseRunStream.start(request, response, events, streams, SseFrames.runEvents());
    }

    /** As {@link #start(HttpServletRequest, HttpServletResponse, Flow.Publisher, SseStreams)}, written by {@code frames}. */
    public static void start(HttpServletRequest request, HttpServletResponse response, Flow.Publisher<RunEvent> events,
            SseStreams streams, SseFrames frames) throws IOException {
        SseRunStream.start(request, response, events, streams, frames);
    }
}
