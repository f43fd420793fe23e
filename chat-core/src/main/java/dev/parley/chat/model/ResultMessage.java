package dev.parley.chat.model;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** The result of the tool call with the same {@code executionId}; {@code error} marks a failed call. */
public record ResultMessage(
        String id,
        String threadId,
        String runId,
        @Nullable String parentMessageId,
        MessageStatus status,
        Instant createdAt,
        String executionId,
        String name,
        String result,
        boolean error)
        implements Message {

    public ResultMessage {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(executionId, "executionId");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(result, "result");
    }

    @Override
    public MessageKind kind() {
        return MessageKind.RESULT;
    }
}
