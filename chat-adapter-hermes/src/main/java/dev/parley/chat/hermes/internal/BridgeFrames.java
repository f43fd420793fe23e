package dev.parley.chat.hermes.internal;

import static dev.parley.chat.hermes.internal.BridgeRun.orElse;
import static dev.parley.chat.hermes.internal.BridgeRun.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.hermes.HermesErrors;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.TodoItem;
import dev.parley.chat.runtime.RunRequest;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Maps one run's Bridge frames to events, as {@code docs/hermes-bridge-protocol.md} sections 4 and 10
 * say: numbering (a frame whose seq is not above the last one handled is a replay and dropped), thinking
 * blocks, host tool calls, clarify questions and approvals (as pending inputs), sessions, the end. Lives
 * on the run's stream thread, except {@link #expiredByHost}, which any thread may call.
 */
final class BridgeFrames {
    private static final Logger log = LoggerFactory.getLogger(BridgeFrames.class);

    private final String runId;
    private final String assistantMessageId;
    private final ObjectMapper json;
    private final Redactor redactor;
    private final Predicate<AgentStreamEvent> emit;
    private final Set<String> hostToolNames = new HashSet<>();
    private final Set<String> hostCallIds = new HashSet<>();
    private final Set<String> expiredByHost = ConcurrentHashMap.newKeySet();
    private long lastSeq;
    /** The seq of the open thinking block's first frame (0: none open); the block's message id is made of it. */
    private long thinkingSeq;
    private @Nullable String reportedSession;
    private @Nullable String protocolError;

    /**
     * @param emit hands an event on; false once the stream is over (the terminal event went out, or the
     *     subscriber left)
     */
    BridgeFrames(RunRequest request, ObjectMapper json, Redactor redactor, Predicate<AgentStreamEvent> emit) {
        this.runId = request.runId();
        this.assistantMessageId = request.assistantMessageId();
        this.json = json;
        this.redactor = redactor;
        this.emit = emit;
        this.reportedSession = request.runtimeSessionId();
        request.hostTools().forEach(t -> hostToolNames.add(t.name()));
    }

    /** The seq of the last frame handled (0 before the first). */
    long lastSeq() {
        return lastSeq;
    }

    /**
     * Continues after a resume token ({@link #resumeToken()}): frames up to its seq are replays, and the
     * thinking block it names, if any, is still open (its next frames join it).
     */
    void resumeAfter(Token token) {
        lastSeq = token.seq();
        thinkingSeq = token.thinkingSeq();
    }

    /**
     * Where the mapping stands: a mapping that {@linkplain #resumeAfter continues} after this token maps the
     * next frames exactly as this one would. {@code <seq>}, or {@code <seq>;thinking=<first seq>} while a
     * thinking block is open.
     */
    String resumeToken() {
        return new Token(lastSeq, thinkingSeq).toString();
    }

    /** A resume token of the Bridge transport: the last frame handled, and the open thinking block. */
    record Token(long seq, long thinkingSeq) {
        private static final String THINKING = ";thinking=";

        /** @throws IllegalArgumentException for a text that is not a token */
        static Token parse(String text) {
            String trimmed = text.trim();
            int at = trimmed.indexOf(THINKING);
            try {
                long seq = Long.parseLong(at < 0 ? trimmed : trimmed.substring(0, at));
                long thinking = at < 0 ? 0 : Long.parseLong(trimmed.substring(at + THINKING.length()));
                if (seq < 0 || thinking < 0 || thinking > seq) {
                    throw new IllegalArgumentException("a Bridge resume token is a frame seq, got: " + text);
                }
                return new Token(seq, thinking);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("a Bridge resume token is a frame seq, got: " + text, e);
            }
        }

        @Override
        public String toString() {
            return thinkingSeq == 0 ? Long.toString(seq) : seq + THINKING + thinkingSeq;
        }
    }

    /** Why the stream cannot be read on, or null. */
    @Nullable String protocolError() {
        return protocolError;
    }

    /**
     * The host expired approval {@code approvalId} itself and logged that: the Bridge's
     * {@code approval_resolved{expired}} for it is not passed on again.
     */
    void expiredByHost(String approvalId) {
        expiredByHost.add(approvalId);
    }

    /** Handles one SSE frame; false to stop reading (the stream is over, or a frame broke the protocol). */
    boolean onFrame(@Nullable String id, @Nullable String type, String data) {
        DeltaFrame delta = DeltaFrame.read(json, data);
        JsonNode frame = null;
        long seq;
        String kind;
        if (delta != null) {
            seq = delta.seq();
            kind = delta.kind();
        } else {
            try {
                frame = json.readTree(data);
            } catch (IOException e) {
                protocolError = "a frame after seq " + lastSeq + " is not JSON";
                return false;
            }
            if (frame == null || !frame.isObject()) {
                protocolError = "a frame after seq " + lastSeq + " is not a JSON object";
                return false;
            }
            seq = frame.path("seq").asLong(0);
            kind = text(frame, "kind");
        }
        if (seq <= 0 && id != null) {
            try {
                seq = Long.parseLong(id.trim());
            } catch (NumberFormatException e) {
                seq = 0;
            }
        }
        if (seq <= 0) {
            protocolError = "a frame after seq " + lastSeq + " has no seq";
            return false;
        }
        if (seq <= lastSeq) {
            return true;
        }
        if (seq != lastSeq + 1 && lastSeq > 0) {
            log.warn("Run {}: frames {} to {} are missing from the Bridge stream", runId, lastSeq + 1, seq - 1);
        }
        if (kind == null) {
            kind = type == null ? "" : type;
        }
        boolean more = delta != null ? onDelta(delta, seq) : map(kind, frame, seq);
        lastSeq = seq;
        return more;
    }

    private boolean emit(AgentStreamEvent event) {
        return emit.test(event);
    }

    private String clean(String text) {
        return redactor.redact(text);
    }

    private boolean onDelta(DeltaFrame delta, long seq) {
        String text = orElse(delta.text(), "");
        return delta.kind().equals("thinking") ? onThinking(text, seq) : onTextDelta(text);
    }

    private boolean onThinking(String text, long seq) {
        if (thinkingSeq == 0) {
            thinkingSeq = seq;
        }
        return emit(new AgentStreamEvent.ThinkingDelta(runId + ":thinking:" + thinkingSeq, clean(text)));
    }

    private boolean onTextDelta(String text) {
        thinkingSeq = 0;
        return emit(new AgentStreamEvent.TextDelta(assistantMessageId, clean(text)));
    }

    private boolean map(String kind, JsonNode f, long seq) {
        switch (kind) {
            case "run_started": {
                String session = text(f, "hermesSessionId");
                if (session != null) {
                    reportedSession = session;
                    return emit(new AgentStreamEvent.RuntimeSession(session, f.path("resumedSession").asBoolean(false)));
                }
                return true;
            }
            case "session_rotated": {
                String session = text(f, "hermesSessionId");
                if (session != null && !session.equals(reportedSession)) {
                    reportedSession = session;
                    return emit(new AgentStreamEvent.RuntimeSession(session, true));
                }
                return true;
            }
            case "status":
                return emit(new AgentStreamEvent.StatusUpdate(runId + ":status:" + seq, orElse(text(f, "level"), "info"),
                        clean(orElse(text(f, "text"), ""))));
            case "thinking":
                return onThinking(orElse(text(f, "text"), ""), seq);
            case "text_delta":
                return onTextDelta(orElse(text(f, "text"), ""));
            case "tool_call":
                return onToolCall(f);
            case "tool_result": {
                thinkingSeq = 0;
                String callId = text(f, "toolCallId");
                if (callId == null) {
                    protocolError = "tool_result frame " + seq + " has no toolCallId";
                    return false;
                }
                if (hostCallIds.contains(callId) || hostToolNames.contains(orElse(text(f, "toolName"), ""))) {
                    return true;
                }
                return emit(new AgentStreamEvent.ToolCallResult(runId + ":result:" + callId, callId,
                        clean(resultText(f.get("result"))), f.path("isError").asBoolean(false)));
            }
            case "todo_update":
                return emit(new AgentStreamEvent.TodosUpdated(runId + ":todo", todos(f.path("todos"))));
            case "clarify_request":
                return onClarify(f, seq);
            case "clarify_resolved": {
                String clarifyId = text(f, "clarifyId");
                if (clarifyId != null && "cancelled".equalsIgnoreCase(text(f, "outcome"))) {
                    return emit(new AgentStreamEvent.InputResolved(clarifyId, AgentStreamEvent.InputOutcome.CANCELLED, null));
                }
                return true;
            }
            case "approval_request":
                return onApproval(f, seq);
            case "approval_resolved":
                return onApprovalResolved(f);
            case "usage": {
                long in = Math.max(0, f.path("inputTokens").asLong(0));
                long out = Math.max(0, f.path("outputTokens").asLong(0));
                long total = Math.max(0, f.path("totalTokens").asLong(in + out));
                return emit(new AgentStreamEvent.Usage(in, out, total));
            }
            case "final":
                return emit(new AgentStreamEvent.TextFinal(assistantMessageId, clean(orElse(text(f, "text"), ""))));
            case "error":
                return emit(new AgentStreamEvent.RunFailed(orElse(text(f, "code"), ErrorCode.RUNTIME_FAILED.name()),
                        clean(orElse(text(f, "message"), "the agent failed"))));
            case "done":
                return onDone(f);
            default:
                log.debug("Run {}: ignoring a Bridge frame of unknown kind {}", runId, kind);
                return true;
        }
    }

    private boolean onToolCall(JsonNode f) {
        thinkingSeq = 0;
        String callId = text(f, "toolCallId");
        String name = text(f, "toolName");
        if (callId == null || name == null) {
            protocolError = "a tool_call frame has no toolCallId or toolName";
            return false;
        }
        JsonNode args = f.get("args");
        String arguments = args == null || args.isNull() ? "{}" : args.isTextual() ? args.asText() : args.toString();
        boolean host = hostToolNames.contains(name);
        if (!emit(new AgentStreamEvent.ToolCallStart(runId + ":tool:" + callId, callId, name, clean(arguments)))) {
            return false;
        }
        if (host) {
            hostCallIds.add(callId);
            return emit(new AgentStreamEvent.ToolCallEnd(callId));
        }
        return true;
    }

    private boolean onClarify(JsonNode f, long seq) {
        thinkingSeq = 0;
        String clarifyId = text(f, "clarifyId");
        if (clarifyId == null) {
            protocolError = "clarify_request frame " + seq + " has no clarifyId";
            return false;
        }
        List<String> choices = new ArrayList<>();
        for (JsonNode choice : f.path("choices")) {
            if (choice.isTextual()) {
                choices.add(clean(choice.asText()));
            }
        }
        ClarifyRequest question = new ClarifyRequest(clean(orElse(text(f, "question"), "")), choices,
                f.path("multiSelect").asBoolean(false));
        return emit(new AgentStreamEvent.InputRequested(runId + ":clarify:" + clarifyId, clarifyId, question, null,
                Long.toString(seq)));
    }

    private boolean onApproval(JsonNode f, long seq) {
        thinkingSeq = 0;
        String approvalId = text(f, "approvalId");
        if (approvalId == null || approvalId.isBlank()) {
            protocolError = "approval_request frame " + seq + " has no approvalId";
            return false;
        }
        return emit(new AgentStreamEvent.InputRequested(runId + ":approval:" + approvalId, approvalId,
                BridgeApprovals.request(f, json, redactor), BridgeApprovals.expiresAt(f), Long.toString(seq)));
    }

    /** Expired or withdrawn on the Bridge's side: the input closes. A decision is logged by the engine itself. */
    private boolean onApprovalResolved(JsonNode f) {
        String approvalId = text(f, "approvalId");
        String outcome = orElse(text(f, "outcome"), "").toLowerCase(Locale.ROOT);
        if (approvalId == null) {
            return true;
        }
        if (outcome.equals("expired") && !expiredByHost.contains(approvalId)) {
            return emit(new AgentStreamEvent.InputResolved(approvalId, AgentStreamEvent.InputOutcome.EXPIRED, null));
        }
        if (outcome.equals("cancelled")) {
            return emit(new AgentStreamEvent.InputResolved(approvalId, AgentStreamEvent.InputOutcome.CANCELLED, null));
        }
        return true;
    }

    private boolean onDone(JsonNode f) {
        String session = text(f, "hermesSessionId");
        if (session != null && !session.equals(reportedSession)) {
            reportedSession = session;
            emit(new AgentStreamEvent.RuntimeSession(session, true));
        }
        String status = orElse(text(f, "status"), "").toLowerCase(Locale.ROOT);
        switch (status) {
            case "completed":
                emit(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
                break;
            case "cancelled":
                emit(new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "cancelled"));
                break;
            case "failed":
                emit(new AgentStreamEvent.RunFailed(ErrorCode.RUNTIME_FAILED.name(),
                        "the Hermes Bridge reported the run failed without saying why"));
                break;
            default:
                emit(new AgentStreamEvent.RunFailed(HermesErrors.PROTOCOL_ERROR,
                        "the done frame has an unknown status: " + clean(status)));
        }
        return false;
    }

    private static List<TodoItem> todos(JsonNode list) {
        List<TodoItem> items = new ArrayList<>();
        for (JsonNode item : list) {
            String id = text(item, "id");
            if (id == null) {
                continue;
            }
            items.add(new TodoItem(id, orElse(text(item, "content"), ""), BridgeRun.todoStatus(text(item, "status")),
                    text(item, "parent")));
        }
        return items;
    }

    private static String resultText(@Nullable JsonNode result) {
        if (result == null || result.isNull()) {
            return "";
        }
        return result.isTextual() ? result.asText() : result.toString();
    }
}
