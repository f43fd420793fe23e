package dev.parley.chat.spring.internal;

import dev.parley.chat.engine.BatchingSubscriber;
import dev.parley.chat.engine.SlowConsumerException;
import dev.parley.chat.event.RunEvent;
import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncEvent;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one run's events to one SSE response with the servlet container's non-blocking output: {@code id:}
 * is the event's seq, {@code event:} its type, {@code data:} the run event as JSON. The stream closes after
 * the terminal event. A client that goes away only cancels this subscription, never the run.
 *
 * <p><b>No thread waits for a client.</b> Events arrive on the engine's delivery threads, heartbeats and
 * stall checks on the {@link SseStreams} timer, "writable again" callbacks on container threads; each of
 * them appends to this stream's buffer and writes only while {@link ServletOutputStream#isReady()} says the
 * connection takes data at once. The container calls back when a full connection drains. So a client that
 * stops reading holds no delivery thread, no heartbeat thread and no container thread, and an idle stream
 * holds no thread at all. The lock guarding the buffer is only ever held for a non-blocking write.
 *
 * <p><b>One flush per burst.</b> Events are formatted as they arrive and written with one flush per burst
 * the engine delivers ({@link BatchingSubscriber#onBatchEnd()}), or sooner once {@link #FLUSH_CHARS} (or a
 * quarter of the buffer, if less) wait. The formatting buffer is released at each burst's end, so an idle
 * stream holds only the container's own buffers.
 *
 * <p><b>Bounded buffer.</b> With a buffer limit of B bytes ({@code parley.web.stream-buffer-size}): the
 * stream asks the engine for as many events as fit in what is free of B/2 at the size of the recent largest
 * (at most {@link #WINDOW} ahead), and for none while the buffer holds B/2 or more, so a slow client is fed
 * at its own pace (the engine keeps the events in its log, and cuts a live subscriber that falls more than
 * {@code subscriber-lag-limit} events behind); an event that would take the buffer past B while it already
 * holds B/2 (possible only with an event far larger than the recent ones) cuts the stream. So a stream
 * holds about B bytes at most, or B/2 plus one event larger than that. A stream whose client has taken none
 * of the data waiting for it for {@code parley.web.stream-write-timeout} is cut too; the stall is measured
 * from the container's last "writable" report, so it allows one write ({@link #FLUSH_CHARS} at most) per
 * timeout. A cut completes the response after what was already written (whole events only); the client
 * reconnects with its cursor ({@code Last-Event-ID}) and gets the rest from the engine, as after a
 * slow-consumer cut.
 *
 * <p>Rejected alternative: a per-stream hand-off to a pool of writer threads doing blocking
 * {@code SseEmitter} sends. A stalled socket would still hold a writer thread until the container's own
 * write timeout (60 s on Tomcat), a bounded pool would starve again with as many stalled clients, and an
 * unbounded one would grow a thread per stalled client.
 */
final class SseRunStream implements BatchingSubscriber<RunEvent>, SseStreams.OpenStream {
    private static final Logger log = LoggerFactory.getLogger(SseRunStream.class);
    /** The most events asked of the engine ahead of what was received. */
    static final int WINDOW = 256;
    /** A burst is written before its end once this many characters wait. */
    static final int FLUSH_CHARS = 64 * 1024;
    private static final byte[] PING = ":ping\n\n".getBytes(StandardCharsets.US_ASCII);

    private final SseStreams streams;
    private final SseFrames frames;
    private final AsyncContext async;
    private final ServletOutputStream out;
    private final int limit;
    /** {@link #FLUSH_CHARS}, or a quarter of the buffer if less. */
    private final int sealChars;
    private final AtomicBoolean closed = new AtomicBoolean();
    private volatile Flow.@Nullable Subscription subscription;

    private final Object lock = new Object();
    // guarded by lock
    private final StringBuilder pending = new StringBuilder();
    private final ArrayDeque<byte[]> queue = new ArrayDeque<>();
    private long queuedBytes;
    /** The container has said once that the connection takes data; nothing is written before. */
    private boolean writable;
    /** Something (at first: the response headers) was written and not flushed. */
    private boolean dirty = true;
    /** The engine ended the subscription; the response completes once the buffer is written. */
    private boolean finishing;
    private int outstanding;
    /**
     * A formatted event's size as the stream sizes its demand: the largest seen, decaying by 1/16 per event,
     * and at first a sixteenth of the buffer, so that the engine is not asked for more than the buffer's free
     * half holds.
     */
    private long eventChars;
    private boolean blocked;
    private long blockedSince;

    private SseRunStream(SseStreams streams, SseFrames frames, AsyncContext async, ServletOutputStream out) {
        this.streams = streams;
        this.frames = frames;
        this.async = async;
        this.out = out;
        this.limit = streams.bufferLimit();
        this.sealChars = Math.min(FLUSH_CHARS, limit / 4);
        this.eventChars = limit / 16;
        pending.append(frames.prelude());
    }

    /**
     * Turns the request into an asynchronous SSE response fed by {@code events}. Called on the request's
     * thread, which returns at once; the response is committed when the container first reports it writable.
     *
     * @throws IOException if the response's output cannot be opened
     * @throws IllegalStateException if the request does not support asynchronous processing
     */
    static void start(HttpServletRequest request, HttpServletResponse response, Flow.Publisher<RunEvent> events,
            SseStreams streams, SseFrames frames) throws IOException {
        response.setStatus(HttpServletResponse.SC_OK);
        response.setContentType("text/event-stream");
        response.setCharacterEncoding(StandardCharsets.UTF_8.name());
        response.setHeader("Cache-Control", "no-cache");
        response.setHeader("X-Accel-Buffering", "no");
        AsyncContext async = request.startAsync(request, response);
        async.setTimeout(0);
        SseRunStream stream = new SseRunStream(streams, frames, async, response.getOutputStream());
        Connection connection = stream.new Connection();
        async.addListener(connection);
        stream.out.setWriteListener(connection);
        events.subscribe(stream);
    }

    // ------------------------------------------------------------------ engine signals (delivery threads)

    @Override
    public void onSubscribe(Flow.Subscription s) {
        subscription = s;
        if (closed.get()) {
            s.cancel();
            return;
        }
        streams.register(this);
        if (closed.get()) {
            streams.unregister(this);
            s.cancel();
            return;
        }
        long first;
        synchronized (lock) {
            first = demand();
        }
        request(first);
    }

    @Override
    public void onNext(RunEvent event) {
        boolean overflow = false;
        boolean written = true;
        boolean ended = false;
        long more = 0;
        synchronized (lock) {
            if (closed.get() || finishing) {
                return;
            }
            String text = frames.frame(event);
            outstanding--;
            eventChars = Math.max(text.length(), eventChars - eventChars / 16);
            long before = buffered();
            if (before >= limit / 2 && before + text.length() > limit) {
                overflow = true;
            } else if (frames.ended()) {
                pending.append(text);
                ended = true;
            } else {
                pending.append(text);
                if (pending.length() >= sealChars) {
                    seal();
                    written = drain();
                }
                more = demand();
            }
        }
        if (overflow) {
            cut("its client reads slower than the run writes and the stream's buffer is full");
        } else if (ended) {
            endEarly();
        } else if (!written) {
            clientGone(true);
        } else {
            request(more);
        }
    }

    @Override
    public void onBatchEnd() {
        boolean written;
        boolean ended;
        long more = 0;
        synchronized (lock) {
            if (closed.get() || finishing) {
                return;
            }
            pending.append(frames.batchEnd());
            ended = frames.ended();
            seal();
            // the stream may now be idle for long: an idle stream keeps no formatting buffer
            pending.trimToSize();
            written = ended || drain();
            if (!ended) {
                more = demand();
            }
        }
        if (ended) {
            endEarly();
        } else if (!written) {
            clientGone(true);
        } else {
            request(more);
        }
    }

    @Override
    public void onError(Throwable error) {
        if (error instanceof SlowConsumerException) {
            log.debug("SSE client fell behind; closing so it reconnects: {}", error.getMessage());
        } else {
            log.warn("A run's event stream failed; closing the SSE response", error);
        }
        synchronized (lock) {
            if (!closed.get() && !finishing) {
                pending.append(frames.failed(error));
            }
        }
        finish();
    }

    /** The frames ended before the run did: stop listening to the run, write what is left and complete. */
    private void endEarly() {
        Flow.Subscription s = subscription;
        if (s != null) {
            s.cancel();
        }
        finish();
    }

    @Override
    public void onComplete() {
        finish();
    }

    private void finish() {
        boolean written;
        boolean done;
        synchronized (lock) {
            if (closed.get()) {
                return;
            }
            seal();
            finishing = true;
            written = drain();
            done = drained();
        }
        if (!written) {
            clientGone(true);
        } else if (done) {
            complete();
        }
    }

    // ------------------------------------------------------------------ container callbacks

    /** The container's side: the connection is writable again, failed, or the response is over. */
    private final class Connection implements WriteListener, AsyncListener {
        @Override
        public void onWritePossible() {
            writePossible();
        }

        @Override
        public void onError(Throwable error) {
            log.debug("SSE client went away: {}", error.toString());
            clientGone(true);
        }

        /**
         * Completes the response here, on the container's thread, even when a delivery thread already gave
         * up on the client: Tomcat hands a failed async request to the error page unless it is completed
         * during this call, and a completion from another thread racing the failure may not count.
         */
        @Override
        public void onError(AsyncEvent event) {
            clientGone(false);
            completeResponse();
        }

        @Override
        public void onTimeout(AsyncEvent event) {
            clientGone(true);
        }

        @Override
        public void onComplete(AsyncEvent event) {
            clientGone(false);
        }

        @Override
        public void onStartAsync(AsyncEvent event) {
            // a stream is started once and never restarted
        }
    }

    private void writePossible() {
        boolean written;
        boolean done;
        long more;
        synchronized (lock) {
            if (closed.get()) {
                return;
            }
            writable = true;
            blocked = false;
            written = drain();
            done = finishing && drained();
            more = demand();
        }
        if (!written) {
            clientGone(true);
        } else if (done) {
            complete();
        } else {
            request(more);
        }
    }

    // ------------------------------------------------------------------ timer (SseStreams)

    @Override
    public void heartbeat() {
        boolean written;
        synchronized (lock) {
            if (closed.get() || !writable || finishing) {
                return;
            }
            if (queue.isEmpty() && pending.length() == 0) {
                queue.add(PING);
                queuedBytes += PING.length;
            }
            written = drain();
        }
        if (!written) {
            clientGone(true);
        }
    }

    @Override
    public void cutIfStalledSince(long deadlineNanos) {
        boolean stalled;
        synchronized (lock) {
            stalled = blocked && blockedSince - deadlineNanos < 0;
        }
        if (stalled) {
            cut("its client has taken no data for the stream write timeout");
        }
    }

    // ------------------------------------------------------------------ the buffer (callers hold the lock)

    private long buffered() {
        return queuedBytes + pending.length();
    }

    /** Moves the burst being formatted to the write queue. */
    private void seal() {
        if (pending.length() == 0) {
            return;
        }
        byte[] bytes = pending.toString().getBytes(StandardCharsets.UTF_8);
        pending.setLength(0);
        queue.add(bytes);
        queuedBytes += bytes.length;
    }

    /**
     * Writes queued chunks and flushes while the connection takes data without blocking; when it does not,
     * the container calls {@link #writePossible()} later.
     *
     * @return false if the client is gone (the write failed)
     */
    private boolean drain() {
        if (closed.get() || !writable) {
            return true;
        }
        try {
            while (!queue.isEmpty()) {
                if (!out.isReady()) {
                    markBlocked();
                    return true;
                }
                byte[] chunk = queue.poll();
                queuedBytes -= chunk.length;
                out.write(chunk);
                dirty = true;
            }
            if (dirty) {
                if (!out.isReady()) {
                    markBlocked();
                    return true;
                }
                out.flush();
                dirty = false;
            }
            blocked = false;
            return true;
        } catch (IOException | RuntimeException e) {
            log.debug("SSE client went away: {}", e.toString());
            return false;
        }
    }

    private void markBlocked() {
        if (!blocked) {
            blocked = true;
            blockedSince = System.nanoTime();
        }
    }

    private boolean drained() {
        return queue.isEmpty() && pending.length() == 0 && !dirty;
    }

    /**
     * How many more events to ask of the engine: as many as the free half of the buffer holds at
     * {@link #eventChars} each (at least one, at most {@link #WINDOW}), asked for once half of them arrived;
     * none while the buffer is half full.
     */
    private long demand() {
        long room = limit / 2 - buffered();
        if (finishing || room <= 0) {
            return 0;
        }
        int target = (int) Math.max(1, Math.min(WINDOW, room / eventChars));
        if (outstanding > target / 2) {
            return 0;
        }
        long more = target - outstanding;
        outstanding = target;
        return more;
    }

    // ------------------------------------------------------------------ the end (never under the lock)

    private void request(long more) {
        Flow.Subscription s = subscription;
        if (more > 0 && s != null) {
            s.request(more);
        }
    }

    /** Everything was written after the run's end (or the engine's cut): the response completes. */
    private void complete() {
        if (closed.compareAndSet(false, true)) {
            release();
            completeResponse();
        }
    }

    /** Gives up on a client that cannot keep up; it reconnects with its cursor. */
    private void cut(String reason) {
        if (closed.compareAndSet(false, true)) {
            log.debug("Cutting an SSE stream: {}", reason);
            synchronized (lock) {
                queue.clear();
                queuedBytes = 0;
                pending.setLength(0);
            }
            release();
            completeResponse();
        }
    }

    /** The client went away or the response ended: stop listening; the run goes on. */
    private void clientGone(boolean completeResponse) {
        if (closed.compareAndSet(false, true)) {
            boolean left;
            synchronized (lock) {
                left = !frames.ended();
            }
            release();
            if (left) {
                frames.clientLeft();
            }
            if (completeResponse) {
                completeResponse();
            }
        }
    }

    private void release() {
        streams.unregister(this);
        Flow.Subscription s = subscription;
        if (s != null) {
            s.cancel();
        }
    }

    private void completeResponse() {
        try {
            async.complete();
        } catch (IllegalStateException alreadyOver) {
            log.trace("The SSE response was already complete", alreadyOver);
        }
    }
}
