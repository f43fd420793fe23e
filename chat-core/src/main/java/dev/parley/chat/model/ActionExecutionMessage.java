package dev.parley.chat.model;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A tool call. {@code executionId} is the runtime's id for the call (a {@link ResultMessage} with the
 * same execution id carries its result); {@code arguments} is JSON text, possibly incomplete while the
 * call is still {@link MessageStatus#IN_PROGRESS} and its arguments stream in.
 */
public record ActionExecutionMessage(
        String id,
        String threadId,
        String runId,
        @Nullable String parentMessageId,
        MessageStatus status,
        Instant createdAt,
        String executionId,
        String name,
        String arguments)
        implements Message {

    public ActionExecutionMessage {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(executionId, "executionId");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(arguments, "arguments");
    }

    @Override
    public MessageKind kind() {
        return MessageKind.ACTION_EXECUTION;
    }
}
