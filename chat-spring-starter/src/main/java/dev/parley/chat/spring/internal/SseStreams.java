package dev.parley.chat.spring.internal;

import dev.parley.chat.event.RunEvent;
import java.util.concurrent.Flow;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/** Creates SSE responses for run event publishers. */
public final class SseStreams {
    private SseStreams() {
    }

    /** An emitter without a timeout, fed by {@code events}; the servlet thread is released at once. */
    public static SseEmitter start(Flow.Publisher<RunEvent> events, Heartbeats heartbeats) {
        SseEmitter emitter = new SseEmitter(0L);
        events.subscribe(new SseRunStream(emitter, heartbeats));
        return emitter;
    }
}
