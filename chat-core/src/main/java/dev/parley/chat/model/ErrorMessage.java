package dev.parley.chat.model;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** An error shown in the conversation, e.g. why a run failed. */
public record ErrorMessage(
        String id,
        String threadId,
        String runId,
        @Nullable String parentMessageId,
        MessageStatus status,
        Instant createdAt,
        String code,
        String message)
        implements Message {

    public ErrorMessage {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(code, "code");
        Objects.requireNonNull(message, "message");
    }

    @Override
    public MessageKind kind() {
        return MessageKind.ERROR;
    }
}
