package dev.parley.chat.spring.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.engine.StartRun;
import org.jspecify.annotations.Nullable;

/**
 * What a request to start a run says: the message (under the field the endpoint names), the optional model,
 * skill, iteration budget, context and client tools, and the sending client's message id — {@code
 * clientMessageId} in the body or an {@code Idempotency-Key} header.
 */
final class RunBodies {
    static final String IDEMPOTENCY_KEY = "Idempotency-Key";

    private RunBodies() {
    }

    /**
     * The run {@code body} asks for; its {@code context} is the client's, made the run's by {@code contexts}.
     *
     * @param messageField {@code message} for a new message, {@code text} for an edit
     * @param idempotencyKey the {@code Idempotency-Key} header, null when absent
     * @throws ChatException INVALID_INPUT for a field of the wrong type, a missing message, or a body id and a
     *     header that differ
     */
    static StartRun startRun(JsonNode body, String messageField, @Nullable String idempotencyKey, String ownerId,
            ClientContexts contexts) {
        return new StartRun(JsonBodies.requiredText(body, messageField), JsonBodies.optionalText(body, "modelId"),
                JsonBodies.optionalText(body, "skill"), JsonBodies.optionalInt(body, "maxIterations"),
                contexts.runContext(ownerId, JsonBodies.optionalObject(body, "context")))
                .withClientTools(InputBodies.clientTools(body))
                .withClientMessageId(clientMessageId(body, idempotencyKey))
                .withAttachments(JsonBodies.optionalTextList(body, "attachments"));
    }

    private static @Nullable String clientMessageId(JsonNode body, @Nullable String header) {
        String inBody = JsonBodies.optionalText(body, "clientMessageId");
        String key = header == null ? null : header.strip();
        if (inBody != null && key != null && !inBody.equals(key)) {
            throw ChatException.invalidInput("\"clientMessageId\" and the " + IDEMPOTENCY_KEY
                    + " header differ; send one, or the same id in both");
        }
        return inBody != null ? inBody : key;
    }
}
