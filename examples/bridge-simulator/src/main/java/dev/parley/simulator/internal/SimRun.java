package dev.parley.simulator.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.simulator.Scenario;
import java.time.Clock;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One simulated run: its {@link FrameLog} (kept for re-attaching), its status, and what it waits for
 * (a clarify answer, a host tool's result). The agent thread appends frames and waits; HTTP threads
 * answer. Thread-safe.
 */
public final class SimRun {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** Thrown into the agent when the run is cancelled while it waits or paces. */
    public static final class Cancelled extends Exception {
        private static final long serialVersionUID = 1L;

        Cancelled() {
            super("cancelled", null, false, false);
        }
    }

    /** A host tool call's outcome. */
    public record ToolOutcome(String result, boolean error) {
    }

    /** What {@link #answer} and {@link #toolResult} report. */
    public enum Acceptance {
        ACCEPTED, REPLAYED, NOT_PENDING, UNKNOWN
    }

    private final String runId;
    private final Scenario scenario;
    private final String userMessage;
    private final List<String> hostTools;
    private final FrameLog frames;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();

    // guarded by lock
    private String hermesSessionId;
    private String status = "running";
    private boolean cancelled;
    private boolean dropPending;
    private String pendingClarifyId;
    private ObjectNode pendingClarify;
    private final Map<String, List<String>> clarifyAnswers = new HashMap<>();
    private String pendingToolCallId;
    private ObjectNode pendingToolCall;
    private final Map<String, ToolOutcome> toolResults = new HashMap<>();

    public SimRun(String runId, Scenario scenario, String userMessage, List<String> hostTools, String hermesSessionId,
            boolean dropFirstConnection, Clock clock) {
        this.runId = runId;
        this.scenario = scenario;
        this.userMessage = userMessage;
        this.hostTools = List.copyOf(hostTools);
        this.hermesSessionId = hermesSessionId;
        this.dropPending = dropFirstConnection;
        this.frames = new FrameLog(runId, clock);
    }

    public String runId() {
        return runId;
    }

    public Scenario scenario() {
        return scenario;
    }

    public String userMessage() {
        return userMessage;
    }

    public List<String> hostTools() {
        return hostTools;
    }

    // ------------------------------------------------------------------ frames

    /** The run's frame log, for stream writers. */
    public FrameLog frames() {
        return frames;
    }

    /** Appends a frame to the log; returns its seq. */
    public long append(String kind, ObjectNode payload) {
        return frames.append(kind, payload);
    }

    /** True once for the first stream of a DROP run: that connection is to be cut. */
    public boolean takeDrop() {
        lock.lock();
        try {
            boolean drop = dropPending;
            dropPending = false;
            return drop;
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ state

    public String status() {
        lock.lock();
        try {
            return status;
        } finally {
            lock.unlock();
        }
    }

    public void status(String value) {
        lock.lock();
        try {
            status = value;
            changed.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** True once the run's {@code done} frame is logged. */
    public boolean ended() {
        return frames.ended();
    }

    public String hermesSessionId() {
        lock.lock();
        try {
            return hermesSessionId;
        } finally {
            lock.unlock();
        }
    }

    public void hermesSessionId(String value) {
        lock.lock();
        try {
            hermesSessionId = value;
        } finally {
            lock.unlock();
        }
    }

    /** The run's status object for {@code GET /runs/{id}}. */
    public ObjectNode describe() {
        lock.lock();
        try {
            ObjectNode node = JSON.createObjectNode();
            node.put("runId", runId);
            node.put("status", status);
            node.put("hermesSessionId", hermesSessionId);
            node.put("lastSeq", frames.lastSeq());
            if (pendingClarify != null) {
                node.set("pendingClarify", pendingClarify.deepCopy());
            } else {
                node.putNull("pendingClarify");
            }
            if (pendingToolCall != null) {
                node.set("pendingToolCall", pendingToolCall.deepCopy());
            } else {
                node.putNull("pendingToolCall");
            }
            return node;
        } finally {
            lock.unlock();
        }
    }

    // ------------------------------------------------------------------ cancel, clarify, tool results

    /** Asks the run to stop; returns false if it already ended. */
    public boolean cancel() {
        lock.lock();
        try {
            if (frames.ended()) {
                return false;
            }
            cancelled = true;
            changed.signalAll();
            return true;
        } finally {
            lock.unlock();
        }
    }

    public void checkCancelled() throws Cancelled {
        lock.lock();
        try {
            if (cancelled) {
                throw new Cancelled();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Sleeps (for pacing), waking early and throwing if the run is cancelled. */
    public void sleepNanos(long nanos) throws Cancelled, InterruptedException {
        lock.lock();
        try {
            long left = nanos;
            while (left > 0 && !cancelled) {
                left = changed.awaitNanos(left);
            }
            if (cancelled) {
                throw new Cancelled();
            }
        } finally {
            lock.unlock();
        }
    }

    /** Makes a clarify question pending and appends its {@code clarify_request} frame, atomically. */
    public long ask(String clarifyId, ObjectNode question) {
        lock.lock();
        try {
            pendingClarifyId = clarifyId;
            pendingClarify = question.deepCopy();
            pendingClarify.put("clarifyId", clarifyId);
            status = "waiting_for_clarification";
            return append("clarify_request", question);
        } finally {
            lock.unlock();
        }
    }

    /** Waits for the answer to the pending question {@link #ask asked} before. */
    public List<String> awaitAnswer(String clarifyId) throws Cancelled, InterruptedException {
        lock.lock();
        try {
            while (!clarifyAnswers.containsKey(clarifyId) && !cancelled) {
                changed.await(1, TimeUnit.SECONDS);
            }
            pendingClarifyId = null;
            pendingClarify = null;
            if (cancelled && !clarifyAnswers.containsKey(clarifyId)) {
                throw new Cancelled();
            }
            status = "running";
            return clarifyAnswers.get(clarifyId);
        } finally {
            lock.unlock();
        }
    }

    /** Takes an answer: once; the same answer again is a replay; another is refused. */
    public Acceptance answer(String clarifyId, List<String> answer) {
        lock.lock();
        try {
            List<String> taken = clarifyAnswers.get(clarifyId);
            if (taken != null) {
                return taken.equals(answer) ? Acceptance.REPLAYED : Acceptance.NOT_PENDING;
            }
            if (!clarifyId.equals(pendingClarifyId) || cancelled || frames.ended()) {
                return Acceptance.NOT_PENDING;
            }
            clarifyAnswers.put(clarifyId, List.copyOf(answer));
            changed.signalAll();
            return Acceptance.ACCEPTED;
        } finally {
            lock.unlock();
        }
    }

    /** Makes a host tool call pending and appends its {@code tool_call} frame, atomically. */
    public long callHostTool(String toolCallId, ObjectNode call) {
        lock.lock();
        try {
            pendingToolCallId = toolCallId;
            pendingToolCall = call.deepCopy();
            status = "waiting_for_tool_result";
            return append("tool_call", call);
        } finally {
            lock.unlock();
        }
    }

    /** Waits for the result of the host tool call {@link #callHostTool made} before. */
    public ToolOutcome awaitToolResult(String toolCallId) throws Cancelled, InterruptedException {
        lock.lock();
        try {
            while (!toolResults.containsKey(toolCallId) && !cancelled) {
                changed.await(1, TimeUnit.SECONDS);
            }
            pendingToolCallId = null;
            pendingToolCall = null;
            if (!toolResults.containsKey(toolCallId)) {
                throw new Cancelled();
            }
            status = "running";
            return toolResults.get(toolCallId);
        } finally {
            lock.unlock();
        }
    }

    /** Takes a host tool's result: once; the same again is a replay; another is refused. */
    public Acceptance toolResult(String toolCallId, ToolOutcome outcome) {
        lock.lock();
        try {
            ToolOutcome taken = toolResults.get(toolCallId);
            if (taken != null) {
                return taken.equals(outcome) ? Acceptance.REPLAYED : Acceptance.NOT_PENDING;
            }
            if (!toolCallId.equals(pendingToolCallId) || cancelled || frames.ended()) {
                return Acceptance.NOT_PENDING;
            }
            toolResults.put(toolCallId, outcome);
            changed.signalAll();
            return Acceptance.ACCEPTED;
        } finally {
            lock.unlock();
        }
    }
}
