package dev.parley.simulator.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One run's frames, encoded once and kept for re-attaching: the agent thread appends, any number of stream
 * writers read from any seq. Ends with the {@code done} frame. Thread-safe.
 */
public final class FrameLog {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** A batch of frames to write to a stream. */
    public record Batch(List<byte[]> frames, boolean last, boolean heartbeat) {
    }

    private final String runId;
    private final Clock clock;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final ArrayList<byte[]> frames = new ArrayList<>();
    private final ByteArrayOutputStream scratch = new ByteArrayOutputStream(256);
    private boolean ended;

    FrameLog(String runId, Clock clock) {
        this.runId = runId;
        this.clock = clock;
    }

    /**
     * Appends a frame: {@code id: seq / event: kind / data: {runId, seq, ts, tsMicros, kind, …payload}}.
     * Returns its seq.
     */
    public long append(String kind, ObjectNode payload) {
        lock.lock();
        try {
            long seq = frames.size() + 1L;
            Instant now = clock.instant();
            ObjectNode data = JSON.createObjectNode();
            data.put("runId", runId);
            data.put("seq", seq);
            data.put("ts", now.toEpochMilli());
            data.put("tsMicros", now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000);
            data.put("kind", kind);
            data.setAll(payload);
            scratch.reset();
            writeAscii("id: " + seq + "\nevent: " + kind + "\ndata: ");
            JSON.writeValue(scratch, data);
            writeAscii("\n\n");
            frames.add(scratch.toByteArray());
            if (kind.equals("done")) {
                ended = true;
            }
            changed.signalAll();
            return seq;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            lock.unlock();
        }
    }

    private void writeAscii(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        scratch.write(bytes, 0, bytes.length);
    }

    /**
     * The frames after {@code after} (at most {@code max}); waits up to {@code heartbeat} for one. An
     * empty, non-last batch means it is time for a heartbeat.
     */
    public Batch next(long after, int max, long heartbeatNanos) throws InterruptedException {
        lock.lock();
        try {
            long wait = heartbeatNanos;
            while (frames.size() <= after && !ended) {
                if (wait <= 0) {
                    return new Batch(List.of(), false, true);
                }
                wait = changed.awaitNanos(wait);
            }
            int from = (int) Math.min(after, frames.size());
            int to = (int) Math.min(frames.size(), (long) from + max);
            List<byte[]> batch = new ArrayList<>(frames.subList(from, to));
            return new Batch(batch, ended && to == frames.size(), false);
        } finally {
            lock.unlock();
        }
    }

    public long lastSeq() {
        lock.lock();
        try {
            return frames.size();
        } finally {
            lock.unlock();
        }
    }

    public int frameCount() {
        return (int) lastSeq();
    }

    /** True once {@code done} is appended. */
    public boolean ended() {
        lock.lock();
        try {
            return ended;
        } finally {
            lock.unlock();
        }
    }
}
