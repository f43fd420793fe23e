package dev.parley.simulator.internal;

import com.sun.net.httpserver.HttpExchange;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Writes a run's event stream (protocol section 4): the frames after a seq, then live ones, with heartbeats,
 * until {@code done}. Writes go through a 64 KiB buffer, flushed whenever the writer has caught up with the run
 * (a slow run is sent frame by frame, a fast one in large writes). One instance per simulator; thread-safe.
 */
public final class StreamWriter {
    private static final int BATCH = 512;
    private static final byte[] PING = ": ping\n\n".getBytes(StandardCharsets.US_ASCII);

    private final long heartbeatNanos;
    private final int dropAfterFrames;
    private final BooleanSupplier closed;

    /**
     * @param dropAfterFrames after how many frames a stream that is to be cut (the DROP scenario) is cut
     * @param closed true once the simulator closes: open streams then end without {@code done}
     */
    public StreamWriter(Duration heartbeat, int dropAfterFrames, BooleanSupplier closed) {
        this.heartbeatNanos = heartbeat.toNanos();
        this.dropAfterFrames = dropAfterFrames;
        this.closed = closed;
    }

    /**
     * The seq a re-attaching stream starts after (protocol section 6): the query's {@code after}, else the
     * {@code Last-Event-ID} header, else 0; -1 when the one given is not a non-negative integer.
     */
    public static long after(HttpExchange ex) {
        String given = ex.getRequestHeaders().getFirst("Last-Event-ID");
        String query = ex.getRequestURI().getRawQuery();
        if (query != null) {
            for (String pair : query.split("&")) {
                if (pair.startsWith("after=")) {
                    given = pair.substring("after=".length());
                }
            }
        }
        if (given == null) {
            return 0;
        }
        try {
            return Math.max(-1, Long.parseLong(given.strip()));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /**
     * Answers {@code 200 text/event-stream} and writes the run's frames after {@code after} until {@code done}.
     *
     * @param cut whether to cut this connection abruptly after {@code dropAfterFrames} frames: throws
     *     {@link Exchanges.ConnectionCut} then
     * @throws IOException when the client went away (the run goes on)
     */
    public void write(HttpExchange ex, SimRun run, long after, boolean cut) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
        ex.getResponseHeaders().set("Cache-Control", "no-cache");
        ex.getResponseHeaders().set("X-Accel-Buffering", "no");
        ex.sendResponseHeaders(200, 0);
        OutputStream out = new BufferedOutputStream(ex.getResponseBody(), 64 * 1024);
        long next = after;
        try {
            while (!closed.getAsBoolean()) {
                FrameLog.Batch batch = run.frames().next(next, BATCH, heartbeatNanos);
                if (batch.heartbeat()) {
                    out.write(PING);
                    out.flush();
                    continue;
                }
                for (byte[] frame : batch.frames()) {
                    out.write(frame);
                    next++;
                    if (cut && next >= dropAfterFrames) {
                        out.flush();
                        throw new Exchanges.ConnectionCut("connection cut on purpose (DROP scenario)");
                    }
                }
                if (batch.last()) {
                    out.flush();
                    return;
                }
                if (next >= run.frames().lastSeq()) {
                    out.flush();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
