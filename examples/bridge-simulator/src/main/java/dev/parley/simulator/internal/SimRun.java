package dev.parley.simulator.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.simulator.ReceivedFile;
import dev.parley.simulator.Scenario;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One simulated run: its {@link FrameLog} (kept for re-attaching), its status, and what it waits for
 * (a clarify answer, a host tool's result, an approval decision). The agent thread appends frames and waits; HTTP threads
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

    /** What {@link #answer}, {@link #toolResult}, {@link #decide} and {@link #expireApproval} report. */
    public enum Acceptance {
        ACCEPTED, REPLAYED, NOT_PENDING, UNKNOWN, NOT_OFFERED
    }

    /** How an approval wait ended when no decision came: its own timeout or an expiry call. */
    public static final String EXPIRED = "expired";
    private static final String WITHDRAWN = "withdrawn";

    private final String runId;
    private final String threadId;
    private final Scenario scenario;
    private final String userMessage;
    private final List<String> hostTools;
    private final List<ReceivedFile> attachments;
    private final String approvalKey;
    private final boolean clientTakesApprovals;
    private final FrameLog frames;
    private final ReentrantLock lock = new ReentrantLock();
    private final Condition changed = lock.newCondition();
    private final CountDownLatch over = new CountDownLatch(1);

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
    private String pendingApprovalId;
    private ObjectNode pendingApproval;
    private final Map<String, List<String>> approvalChoices = new HashMap<>();
    private final Map<String, String> approvalOutcomes = new HashMap<>();

    /**
     * @param threadId the request's {@code threadId}, or null if it named none
     * @param approvalKey what "session" approvals are remembered under: the thread id, else the Hermes session
     * @param clientTakesApprovals whether the client said {@code clientCapabilities: ["approvals"]}
     * @param attachments the question's files, which the agent names at the start of its answer
     */
    public SimRun(String runId, String threadId, Scenario scenario, String userMessage, List<String> hostTools,
            List<ReceivedFile> attachments, String hermesSessionId, String approvalKey, boolean clientTakesApprovals, boolean dropFirstConnection,
            Clock clock) {
        this.runId = runId;
        this.threadId = threadId;
        this.scenario = scenario;
        this.userMessage = userMessage;
        this.hostTools = List.copyOf(hostTools);
        this.attachments = List.copyOf(attachments);
        this.approvalKey = approvalKey;
        this.clientTakesApprovals = clientTakesApprovals;
        this.hermesSessionId = hermesSessionId;
        this.dropPending = dropFirstConnection;
        this.frames = new FrameLog(runId, clock);
    }

    public String runId() {
        return runId;
    }

    /** The request's {@code threadId}, or null. */
    public String threadId() {
        return threadId;
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

    /** The question's files (protocol section 13), in the order they were attached. */
    public List<ReceivedFile> attachments() {
        return attachments;
    }

    public String approvalKey() {
        return approvalKey;
    }

    public boolean clientTakesApprovals() {
        return clientTakesApprovals;
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

    /** Called once the run's agent is done with it (after {@code done}, and after the simulator took note). */
    public void over() {
        over.countDown();
    }

    /** Waits at most {@code nanos} for {@link #over()}; true if it came. */
    public boolean awaitOver(long nanos) throws InterruptedException {
        return over.await(nanos, TimeUnit.NANOSECONDS);
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
            if (pendingApproval != null) {
                node.set("pendingApproval", pendingApproval.deepCopy());
            } else {
                node.putNull("pendingApproval");
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

    // ------------------------------------------------------------------ approvals

    /**
     * Makes an approval pending and appends its {@code approval_request} frame, atomically.
     *
     * @param request the frame's payload, with {@code approvalId} and {@code choices}
     */
    public long askApproval(ObjectNode request) {
        lock.lock();
        try {
            String approvalId = request.path("approvalId").asText();
            List<String> choices = new ArrayList<>();
            request.path("choices").forEach(choice -> choices.add(choice.asText()));
            approvalChoices.put(approvalId, List.copyOf(choices));
            pendingApprovalId = approvalId;
            pendingApproval = request.deepCopy();
            status = "waiting_for_approval";
            return append("approval_request", request);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits for the decision on the pending approval: {@code once}, {@code session}, {@code always},
     * {@code deny}, or {@link #EXPIRED} when {@code timeoutNanos} (0 for no limit) passed or the client
     * expired it.
     *
     * @throws Cancelled if the run was cancelled first (the approval is withdrawn)
     */
    public String awaitDecision(String approvalId, long timeoutNanos) throws Cancelled, InterruptedException {
        lock.lock();
        try {
            long left = timeoutNanos;
            while (!approvalOutcomes.containsKey(approvalId) && !cancelled) {
                if (timeoutNanos > 0 && left <= 0) {
                    approvalOutcomes.put(approvalId, EXPIRED);
                    break;
                }
                left = changed.awaitNanos(timeoutNanos > 0 ? left : TimeUnit.SECONDS.toNanos(1));
            }
            pendingApprovalId = null;
            pendingApproval = null;
            if (!approvalOutcomes.containsKey(approvalId)) {
                approvalOutcomes.put(approvalId, WITHDRAWN);
                throw new Cancelled();
            }
            status = "running";
            return approvalOutcomes.get(approvalId);
        } finally {
            lock.unlock();
        }
    }

    /** Takes a decision: once; the same decision again is a replay; another, or after the end, is refused. */
    public Acceptance decide(String approvalId, String decision) {
        return resolveApproval(approvalId, decision);
    }

    /** Expires a pending approval at the client's request; a second expiry is a replay. */
    public Acceptance expireApproval(String approvalId) {
        return resolveApproval(approvalId, EXPIRED);
    }

    private Acceptance resolveApproval(String approvalId, String outcome) {
        lock.lock();
        try {
            String taken = approvalOutcomes.get(approvalId);
            if (taken != null) {
                return taken.equals(outcome) ? Acceptance.REPLAYED : Acceptance.NOT_PENDING;
            }
            List<String> offered = approvalChoices.get(approvalId);
            if (offered == null) {
                return Acceptance.UNKNOWN;
            }
            if (!approvalId.equals(pendingApprovalId) || cancelled || frames.ended()) {
                return Acceptance.NOT_PENDING;
            }
            if (!outcome.equals(EXPIRED) && !offered.contains(outcome)) {
                return Acceptance.NOT_OFFERED;
            }
            approvalOutcomes.put(approvalId, outcome);
            changed.signalAll();
            return Acceptance.ACCEPTED;
        } finally {
            lock.unlock();
        }
    }
}
