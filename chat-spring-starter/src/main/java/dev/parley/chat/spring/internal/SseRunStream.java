package dev.parley.chat.spring.internal;

import dev.parley.chat.engine.BatchingSubscriber;
import dev.parley.chat.engine.SlowConsumerException;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.Flow;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.MediaType;
import org.springframework.web.servlet.mvc.method.annotation.ResponseBodyEmitter;
import org.springframework.web.servlet.mvc.method.annotation.SseEmitter;

/**
 * Writes one run's events to one SSE response: {@code id:} is the event's seq, {@code event:} its type,
 * {@code data:} the run event as JSON. The stream closes after the terminal event. A client that goes
 * away only cancels this subscription, never the run. No thread is held while the stream is idle:
 * events are written on the engine's delivery threads, heartbeats on the heartbeat thread.
 *
 * <p>Events are formatted as they arrive and written with one flush per burst the engine delivers
 * ({@link BatchingSubscriber#onBatchEnd()}), or sooner when the buffer passes {@link #FLUSH_CHARS}: a
 * fast run costs one write per burst, not one per token, and a slow one still goes out event by event.
 */
final class SseRunStream implements BatchingSubscriber<RunEvent> {
    private static final Logger log = LoggerFactory.getLogger(SseRunStream.class);
    private static final int WINDOW = 256;
    static final int FLUSH_CHARS = 64 * 1024;
    private static final MediaType TEXT_UTF8 = new MediaType("text", "plain", StandardCharsets.UTF_8);

    private final SseEmitter emitter;
    private final Heartbeats heartbeats;
    private final Object writeLock = new Object();
    private volatile Flow.@Nullable Subscription subscription;
    private volatile boolean closed;
    private int outstanding;
    /** Formatted events not yet written; guarded by {@link #writeLock}. */
    private final StringBuilder pending = new StringBuilder();

    SseRunStream(SseEmitter emitter, Heartbeats heartbeats) {
        this.emitter = emitter;
        this.heartbeats = heartbeats;
        emitter.onCompletion(this::clientGone);
        emitter.onTimeout(this::clientGone);
        emitter.onError(error -> clientGone());
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        subscription = s;
        if (closed) {
            s.cancel();
            return;
        }
        heartbeats.register(this);
        outstanding = WINDOW;
        s.request(WINDOW);
    }

    @Override
    public void onNext(RunEvent event) {
        String json = ChatJson.shared().write(event);
        synchronized (writeLock) {
            if (closed) {
                return;
            }
            pending.append("id:").append(event.seq()).append("\nevent:").append(event.type())
                    .append("\ndata:").append(json).append("\n\n");
            if (pending.length() >= FLUSH_CHARS) {
                writePending();
            }
        }
        if (--outstanding <= WINDOW / 2) {
            int more = WINDOW - outstanding;
            outstanding = WINDOW;
            Flow.Subscription s = subscription;
            if (s != null) {
                s.request(more);
            }
        }
    }

    @Override
    public void onBatchEnd() {
        synchronized (writeLock) {
            writePending();
        }
    }

    /** Writes and flushes the buffered events; the caller holds {@link #writeLock}. */
    private void writePending() {
        if (closed || pending.length() == 0) {
            pending.setLength(0);
            return;
        }
        String text = pending.toString();
        pending.setLength(0);
        if (pending.capacity() > FLUSH_CHARS * 2) {
            pending.trimToSize();
        }
        try {
            emitter.send(Set.of(new ResponseBodyEmitter.DataWithMediaType(text, TEXT_UTF8)));
        } catch (IOException | IllegalStateException e) {
            log.debug("SSE client went away: {}", e.getMessage());
            clientGone();
        }
    }

    @Override
    public void onError(Throwable error) {
        if (error instanceof SlowConsumerException) {
            log.debug("SSE client fell behind; closing so it reconnects: {}", error.getMessage());
        } else {
            log.warn("A run's event stream failed; closing the SSE response", error);
        }
        finish();
    }

    @Override
    public void onComplete() {
        finish();
    }

    void heartbeat() {
        synchronized (writeLock) {
            if (closed) {
                return;
            }
            writePending();
            if (closed) {
                return;
            }
            try {
                emitter.send(SseEmitter.event().comment("ping"));
            } catch (IOException | IllegalStateException e) {
                clientGone();
            }
        }
    }

    private void finish() {
        synchronized (writeLock) {
            writePending();
            if (closed) {
                return;
            }
            closed = true;
        }
        heartbeats.unregister(this);
        emitter.complete();
    }

    private void clientGone() {
        closed = true;
        heartbeats.unregister(this);
        Flow.Subscription s = subscription;
        if (s != null) {
            s.cancel();
        }
    }
}
