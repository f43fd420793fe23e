package dev.parley.simulator.internal;

import static dev.parley.simulator.internal.Exchanges.accepted;
import static dev.parley.simulator.internal.Exchanges.error;
import static dev.parley.simulator.internal.Exchanges.json;
import static dev.parley.simulator.internal.Exchanges.parseJson;
import static dev.parley.simulator.internal.Exchanges.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpExchange;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The routes that hand a run something while it goes: a clarify answer (protocol section 5), a host
 * tool's result (7), a cancel (8), an approval decision or expiry (10). Each gets the request's body, read
 * after the token was checked, and answers as the protocol page says.
 */
public final class ControlRoutes {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Set<String> DECISIONS = Set.of("once", "session", "always", "deny");

    private ControlRoutes() {
    }

    /** {@code POST /runs/{id}/clarify}. */
    public static void clarify(HttpExchange ex, SimRun run, byte[] request) throws IOException {
        JsonNode body = parseJson(ex, request);
        if (body == null) {
            return;
        }
        String clarifyId = text(body, "clarifyId");
        JsonNode answerNode = body.get("answer");
        List<String> answer = new ArrayList<>();
        if (answerNode != null && answerNode.isTextual()) {
            answer.add(answerNode.asText());
        } else if (answerNode != null && answerNode.isArray()) {
            for (JsonNode item : answerNode) {
                if (!item.isTextual()) {
                    answer.clear();
                    break;
                }
                answer.add(item.asText());
            }
        }
        if (clarifyId == null || clarifyId.isBlank() || answer.isEmpty()) {
            error(ex, 400, "INVALID_REQUEST", "clarifyId and a non-empty answer (a string or a list of strings) are required",
                    false);
            return;
        }
        SimRun.Acceptance outcome = run.answer(clarifyId, answer);
        if (outcome == SimRun.Acceptance.NOT_PENDING) {
            error(ex, 409, "CLARIFY_NOT_PENDING", "the run does not wait for this answer", false);
            return;
        }
        accepted(ex, outcome == SimRun.Acceptance.REPLAYED);
    }

    /** {@code POST /runs/{id}/cancel}. */
    public static void cancel(HttpExchange ex, SimRun run) throws IOException {
        if (run.cancel()) {
            json(ex, 202, JSON.createObjectNode().put("status", "cancelling"));
        } else {
            json(ex, 200, JSON.createObjectNode().put("status", run.status()));
        }
    }

    /** {@code POST /runs/{id}/tool-result}. */
    public static void toolResult(HttpExchange ex, SimRun run, byte[] request) throws IOException {
        JsonNode body = parseJson(ex, request);
        if (body == null) {
            return;
        }
        String callId = text(body, "toolCallId");
        JsonNode result = body.get("result");
        if (callId == null || callId.isBlank() || result == null || !result.isTextual()) {
            error(ex, 400, "INVALID_REQUEST", "toolCallId and a string result are required", false);
            return;
        }
        SimRun.Acceptance outcome = run.toolResult(callId,
                new SimRun.ToolOutcome(result.asText(), body.path("isError").asBoolean(false)));
        if (outcome == SimRun.Acceptance.NOT_PENDING) {
            error(ex, 409, "TOOL_CALL_NOT_PENDING", "the run does not wait for this tool result", false);
            return;
        }
        accepted(ex, outcome == SimRun.Acceptance.REPLAYED);
    }

    /** {@code POST /runs/{id}/approval}. */
    public static void approval(HttpExchange ex, SimRun run, byte[] request) throws IOException {
        JsonNode body = parseJson(ex, request);
        if (body == null) {
            return;
        }
        String approvalId = text(body, "approvalId");
        String decision = text(body, "decision");
        if (approvalId == null || approvalId.isBlank() || decision == null || !DECISIONS.contains(decision)) {
            error(ex, 400, "INVALID_REQUEST", "approvalId and a decision (once, session, always or deny) are required",
                    false);
            return;
        }
        approvalAnswer(ex, run.decide(approvalId, decision), "decision " + decision);
    }

    /** {@code POST /runs/{id}/approval/expire}. */
    public static void expireApproval(HttpExchange ex, SimRun run, byte[] request) throws IOException {
        JsonNode body = parseJson(ex, request);
        if (body == null) {
            return;
        }
        String approvalId = text(body, "approvalId");
        if (approvalId == null || approvalId.isBlank()) {
            error(ex, 400, "INVALID_REQUEST", "approvalId is required", false);
            return;
        }
        approvalAnswer(ex, run.expireApproval(approvalId), "expiry");
    }

    private static void approvalAnswer(HttpExchange ex, SimRun.Acceptance outcome, String what) throws IOException {
        switch (outcome) {
            case UNKNOWN:
                error(ex, 404, "APPROVAL_NOT_FOUND", "the run never asked this approval", false);
                break;
            case NOT_PENDING:
                error(ex, 409, "APPROVAL_NOT_PENDING", "the approval was decided otherwise, expired or withdrawn", false);
                break;
            case NOT_OFFERED:
                error(ex, 400, "INVALID_REQUEST", "the " + what + " is not among the approval's choices", false);
                break;
            default:
                accepted(ex, outcome == SimRun.Acceptance.REPLAYED);
        }
    }
}
