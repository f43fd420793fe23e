package dev.parley.simulator.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.simulator.ReceivedFile;
import java.util.ArrayList;
import java.util.List;

/**
 * A {@code POST /run} body (protocol section 3), checked field by field.
 *
 * @param threadId the conversation's key, or null when the request names none
 * @param sessionId the Hermes session to continue, or null for a new one
 * @param systemPrompt null when absent
 * @param hostTools the names of the host tools offered
 * @param takesApprovals whether {@code clientCapabilities} contains {@code approvals}
 * @param historyEntries how many {@code history} entries came (the simulator plays its scenario either way)
 * @param attachments the question's files, checked and decoded (protocol section 13)
 */
public record StartRequest(String runId, String threadId, String sessionId, String userMessage, String systemPrompt,
        boolean modelApiKeyPresent, List<String> hostTools, boolean takesApprovals, int historyEntries,
        List<ReceivedFile> attachments) {

    /**
     * Thrown for a body that breaks a rule; its message names the field. {@code 400 INVALID_REQUEST}, or
     * {@code 413 TOO_LARGE} for attachments past the limits.
     */
    public static final class Invalid extends Exception {
        private static final long serialVersionUID = 1L;
        private final int status;
        private final String code;

        Invalid(String message) {
            this(400, "INVALID_REQUEST", message);
        }

        Invalid(int status, String code, String message) {
            super(message, null, false, false);
            this.status = status;
            this.code = code;
        }

        public int status() {
            return status;
        }

        public String code() {
            return code;
        }
    }

    /**
     * The request in {@code body}, its attachments checked against {@code limits}; throws {@link Invalid} naming the
     * first bad field.
     */
    public static StartRequest parse(JsonNode body, Attachments.Limits limits) throws Invalid {
        String runId = Exchanges.text(body, "runId");
        String message = Exchanges.text(body, "userMessage");
        JsonNode session = body.get("sessionId");
        JsonNode iterations = body.get("maxIterations");
        JsonNode thread = body.get("threadId");
        if (runId == null || runId.isBlank() || runId.length() > 200) {
            throw new Invalid("runId must be a non-blank string of at most 200 characters");
        }
        if (message == null || message.isBlank()) {
            throw new Invalid("userMessage must be a non-blank string");
        }
        if (session != null && !session.isNull() && (!session.isTextual() || session.asText().isBlank())) {
            throw new Invalid("sessionId must be a non-blank string or null");
        }
        if (thread != null && !thread.isNull() && !thread.isTextual()) {
            throw new Invalid("threadId must be a string or null");
        }
        if (iterations != null && !iterations.isNull() && (!iterations.canConvertToInt() || iterations.asInt() < 1)) {
            throw new Invalid("maxIterations must be a positive integer");
        }
        List<String> hostTools = new ArrayList<>();
        for (JsonNode tool : body.path("hostTools")) {
            String name = Exchanges.text(tool, "name");
            if (name != null && !name.isBlank()) {
                hostTools.add(name);
            }
        }
        boolean takesApprovals = false;
        for (JsonNode capability : body.path("clientCapabilities")) {
            takesApprovals |= "approvals".equals(capability.asText());
        }
        List<ReceivedFile> attachments = Attachments.parse(body.get("attachments"), limits);
        String threadId = thread == null || thread.isNull() || thread.asText().isBlank() ? null : thread.asText();
        return new StartRequest(runId, threadId, session == null || session.isNull() ? null : session.asText(), message,
                Exchanges.text(body, "systemPrompt"), Exchanges.text(body.path("modelConfig"), "apiKey") != null,
                List.copyOf(hostTools), takesApprovals, body.path("history").size(), attachments);
    }
}
