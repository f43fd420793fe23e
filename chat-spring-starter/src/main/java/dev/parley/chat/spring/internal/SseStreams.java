package dev.parley.chat.spring.internal;

import dev.parley.chat.ChatException;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The open SSE streams of the application and their settings. One timer thread sends every stream's
 * heartbeats and cuts streams whose client has stopped taking data; it never waits on a client, since a
 * stream only writes what its socket accepts at once.
 *
 * <p>Thread-safe. Free of servlet types, so that it can be looked up where no servlet API is present.
 */
public final class SseStreams implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(SseStreams.class);

    /** What the timer does with each open stream. Implementations must not block. */
    interface OpenStream {
        void heartbeat();

        /** Cuts the stream if its client has taken none of the data waiting for it since {@code deadline}. */
        void cutIfStalledSince(long deadlineNanos);
    }

    private final Set<OpenStream> streams = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService timer;
    private final int bufferLimit;
    private final long writeTimeoutNanos;

    /**
     * @param heartbeat how often each open stream gets a heartbeat comment
     * @param bufferBytes the most formatted event text one stream holds for a slow client (see {@code SseRunStream})
     * @param writeTimeout how long a client may take none of the data waiting for it before its stream is cut
     * @throws ChatException CONFIGURATION for a duration that is not positive or a buffer under 1 KiB
     */
    public SseStreams(Duration heartbeat, int bufferBytes, Duration writeTimeout) {
        requirePositive("heartbeat", heartbeat);
        requirePositive("stream-write-timeout", writeTimeout);
        if (bufferBytes < 1024) {
            throw ChatException.configuration("the stream buffer must be at least 1 KiB, got " + bufferBytes + " bytes");
        }
        this.bufferLimit = bufferBytes;
        this.writeTimeoutNanos = writeTimeout.toNanos();
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "parley-sse-timer");
            thread.setDaemon(true);
            return thread;
        });
        long beat = Math.max(1, heartbeat.toMillis());
        timer.scheduleAtFixedRate(this::beat, beat, beat, TimeUnit.MILLISECONDS);
        long sweep = Math.max(10, Math.min(1_000, writeTimeout.toMillis() / 4));
        timer.scheduleAtFixedRate(this::sweep, sweep, sweep, TimeUnit.MILLISECONDS);
    }

    private static void requirePositive(String name, Duration value) {
        if (value.isZero() || value.isNegative()) {
            throw ChatException.configuration("the " + name + " must be positive, got " + value);
        }
    }

    int bufferLimit() {
        return bufferLimit;
    }

    void register(OpenStream stream) {
        streams.add(stream);
    }

    void unregister(OpenStream stream) {
        streams.remove(stream);
    }

    /** How many streams are open now. */
    public int openStreams() {
        return streams.size();
    }

    private void beat() {
        for (OpenStream stream : streams) {
            try {
                stream.heartbeat();
            } catch (RuntimeException e) {
                log.warn("An SSE stream's heartbeat failed", e);
            }
        }
    }

    private void sweep() {
        long deadline = System.nanoTime() - writeTimeoutNanos;
        for (OpenStream stream : streams) {
            try {
                stream.cutIfStalledSince(deadline);
            } catch (RuntimeException e) {
                log.warn("Checking an SSE stream for a stalled client failed", e);
            }
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
