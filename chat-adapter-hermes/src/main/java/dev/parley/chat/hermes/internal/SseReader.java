package dev.parley.chat.hermes.internal;

import dev.parley.chat.runtime.StreamPublisher;
import java.io.IOException;
import okhttp3.Call;
import okhttp3.Response;
import okhttp3.ResponseBody;
import okhttp3.sse.EventSource;
import okhttp3.sse.EventSourceListener;
import okhttp3.sse.EventSources;
import okio.Buffer;
import okio.ForwardingSource;
import okio.Okio;
import org.jspecify.annotations.Nullable;

/**
 * Reads one Server-Sent Events response on the calling thread (okhttp-sse's parser; comment lines such as
 * heartbeats are skipped by it, but they still reset the read timeout) and hands each frame to a
 * {@link FrameHandler}. Blocking in the handler back-pressures the socket.
 *
 * <p>The frames parsed from one read of the socket form a burst of the emitter they go to:
 * {@link StreamPublisher.Emitter#beginBurst()} when the parser has new bytes in hand,
 * {@link StreamPublisher.Emitter#endBurst()} before every read that may wait for the network and once more
 * when reading stops.
 */
final class SseReader {

    /** Receives the frames of one response. */
    interface FrameHandler {
        /** Handles a frame; returns false to stop reading (the call is then cancelled). */
        boolean onFrame(@Nullable String id, @Nullable String type, String data);
    }

    /** How reading ended: stopped by the handler, the body's end, or a failure. */
    record Ending(boolean stopped, @Nullable Throwable failure) {
        boolean closed() {
            return !stopped && failure == null;
        }
    }

    private SseReader() {
    }

    static Ending read(Call call, Response response, FrameHandler handler, StreamPublisher.Emitter<?> bursts) {
        Listener listener = new Listener(call, handler);
        try {
            EventSources.processResponse(withBursts(response, bursts), listener);
        } catch (RuntimeException e) {
            listener.failure = e;
        } finally {
            bursts.endBurst();
            response.close();
        }
        return new Ending(listener.stopped, listener.stopped ? null : listener.failure);
    }

    /** The response with a body that ends the current burst before each read and begins one after it. */
    private static Response withBursts(Response response, StreamPublisher.Emitter<?> bursts) {
        ResponseBody body = response.body();
        if (body == null) {
            return response;
        }
        ForwardingSource marked = new ForwardingSource(body.source()) {
            @Override
            public long read(Buffer sink, long byteCount) throws IOException {
                bursts.endBurst();
                long read = super.read(sink, byteCount);
                if (read > 0) {
                    bursts.beginBurst();
                }
                return read;
            }
        };
        return response.newBuilder()
                .body(ResponseBody.create(Okio.buffer(marked), body.contentType(), body.contentLength()))
                .build();
    }

    private static final class Listener extends EventSourceListener {
        private final Call call;
        private final FrameHandler handler;
        private boolean stopped;
        private @Nullable Throwable failure;

        Listener(Call call, FrameHandler handler) {
            this.call = call;
            this.handler = handler;
        }

        @Override
        public void onEvent(EventSource source, @Nullable String id, @Nullable String type, String data) {
            if (stopped) {
                return;
            }
            boolean more;
            try {
                more = handler.onFrame(id, type, data);
            } catch (RuntimeException e) {
                failure = e;
                more = false;
            }
            if (!more) {
                stopped = failure == null;
                call.cancel();
            }
        }

        @Override
        public void onFailure(EventSource source, @Nullable Throwable t, @Nullable Response response) {
            if (!stopped && failure == null) {
                failure = t != null ? t : new IllegalStateException("the stream failed");
            }
        }
    }
}
