package dev.parley.chaos;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;

/**
 * A run started over HTTP and followed, as a browser would, over its SSE stream from seq 0 on a thread
 * of its own: what the browser saw is kept, to hold the store to it after the host died.
 */
final class TrackedRun {
    private final String sessionId;
    private final String runId;
    private final String message;
    private final List<SseClient.Event> seen = new ArrayList<>();
    private final Set<String> answeredInputs = new HashSet<>();
    private final Thread reader;
    private volatile SseClient.@Nullable Stream stream;
    private @Nullable String replayDigest;

    private TrackedRun(String base, String sessionId, String runId, String message) {
        this.sessionId = sessionId;
        this.runId = runId;
        this.message = message;
        this.reader = new Thread(() -> follow(base), "browser-" + runId);
        this.reader.setDaemon(true);
        this.reader.start();
    }

    /** Starts a run on a new session and follows it. */
    static TrackedRun start(Rest rest, String message) {
        String session = rest.newSession();
        return new TrackedRun(rest.base(), session, rest.startRun(session, message), message);
    }

    String sessionId() {
        return sessionId;
    }

    String runId() {
        return runId;
    }

    /** What the browser saw, in order. */
    synchronized List<SseClient.Event> seen() {
        return List.copyOf(seen);
    }

    synchronized void answered(String inputId) {
        answeredInputs.add(inputId);
    }

    synchronized boolean wasAnswered(String inputId) {
        return answeredInputs.contains(inputId);
    }

    /** True once any of the run's inputs was answered (before the kill, or after the restart). */
    synchronized boolean hasAnswers() {
        return !answeredInputs.isEmpty();
    }

    /** What the run was doing when the host died, as far as the browser could tell. */
    synchronized String momentAtKill() {
        if (seen.stream().anyMatch(SseClient.Event::terminal)) {
            return "ended";
        }
        int asked = 0;
        for (SseClient.Event event : seen) {
            if (event.type().equals("input_requested")) {
                asked++;
            } else if (event.type().equals("input_resolved")) {
                asked--;
            }
        }
        if (asked > 0) {
            return "waiting";
        }
        return message.startsWith("long") ? "flushing" : "streaming";
    }

    /** Waits for the browser's stream to break (the host died), and closes it. */
    void stopReading() {
        try {
            reader.join(TimeUnit.SECONDS.toMillis(5));
            SseClient.Stream open = stream;
            if (open != null) {
                open.close();
            }
            reader.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException ignored) {
            // closing a broken stream
        }
    }

    /** The digest of the replay verified after the restart (null before). */
    @Nullable String replayDigest() {
        return replayDigest;
    }

    void verified(List<SseClient.Event> replay) {
        replayDigest = digest(replay);
    }

    private void follow(String base) {
        try (SseClient.Stream open = SseClient.open(base, "/api/chat/runs/" + runId + "/stream", null)) {
            stream = open;
            SseClient.Event event;
            while ((event = open.next()) != null) {
                synchronized (this) {
                    seen.add(event);
                }
                if (event.terminal()) {
                    return;
                }
            }
        } catch (IOException | RuntimeException broken) {
            // the host died under the stream: what was seen is kept
        }
    }

    /** A digest of a replay's seqs and data, to check that a finished run never changes. */
    static String digest(List<SseClient.Event> events) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            for (SseClient.Event event : events) {
                sha.update((event.seq() + "\n" + event.type() + "\n" + event.data() + "\n").getBytes(StandardCharsets.UTF_8));
            }
            return events.size() + ":" + HexFormat.of().formatHex(sha.digest());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
