package dev.parley.chat.hermes.internal;

import static dev.parley.chat.hermes.internal.BridgeRun.orElse;
import static dev.parley.chat.hermes.internal.BridgeRun.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * The Bridge's approvals addition ({@code docs/hermes-bridge-protocol.md} section 10) in Parley's terms:
 * Hermes' choices {@code once}, {@code session}, {@code always}, {@code deny} as {@link ApprovalDecision}s
 * and back, and an {@code approval_request} frame as an {@link ApprovalRequest}.
 */
public final class BridgeApprovals {
    /** What {@code clientCapabilities} says for this addition in {@code POST /run}. */
    public static final String CLIENT_CAPABILITY = "approvals";
    static final String DEFAULT_TOOL = "terminal";
    static final String DEFAULT_DESCRIPTION = "Hermes asks before it runs this command";

    private BridgeApprovals() {
    }

    /** The Bridge's name for a decision: once, session, always, deny. */
    public static String choice(ApprovalDecision decision) {
        switch (decision) {
            case ALLOW_ONCE:
                return "once";
            case ALLOW_FOR_THREAD:
                return "session";
            case ALWAYS_ALLOW:
                return "always";
            case DENY:
            default:
                return "deny";
        }
    }

    /** The decision a Bridge choice stands for, or null for a choice this version does not know. */
    static @Nullable ApprovalDecision decision(String choice) {
        switch (choice.toLowerCase(Locale.ROOT)) {
            case "once":
                return ApprovalDecision.ALLOW_ONCE;
            case "session":
                return ApprovalDecision.ALLOW_FOR_THREAD;
            case "always":
                return ApprovalDecision.ALWAYS_ALLOW;
            case "deny":
                return ApprovalDecision.DENY;
            default:
                return null;
        }
    }

    /**
     * The approval an {@code approval_request} frame asks for: the tool (terminal unless named), the command
     * as its arguments ({@code {"command": …}}), the description, and the offered choices that this version
     * knows (allow once and deny always). Texts are redacted; the command is never editable.
     */
    static ApprovalRequest request(JsonNode frame, ObjectMapper json, Redactor redactor) {
        String command = redactor.redact(orElse(text(frame, "command"), ""));
        String arguments = json.createObjectNode().put("command", command).toString();
        String description = orElse(text(frame, "description"), "");
        List<ApprovalDecision> decisions = new ArrayList<>();
        for (JsonNode choice : frame.path("choices")) {
            ApprovalDecision decision = choice.isTextual() ? decision(choice.asText()) : null;
            if (decision != null) {
                decisions.add(decision);
            }
        }
        return new ApprovalRequest(orElse(text(frame, "toolName"), DEFAULT_TOOL), arguments,
                redactor.redact(description.isBlank() ? DEFAULT_DESCRIPTION : description), decisions, false);
    }

    /** {@code expiresAt} (epoch milliseconds) as an instant; null when absent, null or not a number. */
    static @Nullable Instant expiresAt(JsonNode frame) {
        JsonNode at = frame.get("expiresAt");
        return at != null && at.isNumber() && at.asLong() > 0 ? Instant.ofEpochMilli(at.asLong()) : null;
    }
}
