package dev.parley.chat.hermes.internal;

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
 * <p>The frames parsed from one read of the socket form a burst: {@link Bursts#begin()} is called when the
 * parser has new bytes in hand and {@link Bursts#end()} before every read that may wait for the network,
 * and once more when reading stops.
 */
final class SseReader {

    /** Receives the frames of one response. */
    interface FrameHandler {
        /** Handles a frame; returns false to stop reading (the call is then cancelled). */
        boolean onFrame(@Nullable String id, @Nullable String type, String data);
    }

    /** Told where the bursts of frames begin and end (see the class comment). */
    interface Bursts {
        Bursts NONE = new Bursts() {
            @Override
            public void begin() {
            }

            @Override
            public void end() {
            }
        };

        void begin();

        void end();
    }

    /** How reading ended: stopped by the handler, the body's end, or a failure. */
    record Ending(boolean stopped, @Nullable Throwable failure) {
        boolean closed() {
            return !stopped && failure == null;
        }
    }

    private SseReader() {
    }

    static Ending read(Call call, Response response, FrameHandler handler, Bursts bursts) {
        Listener listener = new Listener(call, handler);
        try {
            EventSources.processResponse(withBursts(response, bursts), listener);
        } catch (RuntimeException e) {
            listener.failure = e;
        } finally {
            bursts.end();
            response.close();
        }
        return new Ending(listener.stopped, listener.stopped ? null : listener.failure);
    }

    /** The response with a body that ends the current burst before each read and begins one after it. */
    private static Response withBursts(Response response, Bursts bursts) {
        ResponseBody body = response.body();
        if (body == null || bursts == Bursts.NONE) {
            return response;
        }
        ForwardingSource marked = new ForwardingSource(body.source()) {
            @Override
            public long read(Buffer sink, long byteCount) throws IOException {
                bursts.end();
                long read = super.read(sink, byteCount);
                if (read > 0) {
                    bursts.begin();
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
