package dev.parley.chat.webhooks.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.outbox.OutboxEntry;

/**
 * The body of a delivery: {@code {"type": "run.succeeded", "timestamp": "…Z", "data": {"threadId", "runId",
 * "status"[, "inputId", "inputKind"]}}}. Made anew for each attempt from the entry alone, so every attempt sends
 * the same bytes. Ids and states only: no message text, no owner. Thread-safe.
 */
public final class Payloads {
    private static final ObjectMapper JSON = new ObjectMapper();

    private Payloads() {
    }

    public static String body(OutboxEntry entry) {
        ObjectNode root = JSON.createObjectNode();
        root.put("type", entry.type().wireName());
        root.put("timestamp", entry.occurredAt().toString());
        ObjectNode data = root.putObject("data");
        data.put("threadId", entry.threadId());
        data.put("runId", entry.runId());
        data.put("status", entry.status().name());
        if (entry.inputId() != null && entry.inputKind() != null) {
            data.put("inputId", entry.inputId());
            data.put("inputKind", entry.inputKind().wireName());
        }
        try {
            return JSON.writeValueAsString(root);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("a webhook payload could not be written", e);
        }
    }
}
