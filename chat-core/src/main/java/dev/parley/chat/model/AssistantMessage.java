package dev.parley.chat.model;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The agent's answer in a run. Created as an {@link MessageStatus#IN_PROGRESS} placeholder when the run
 * starts; holds the final text, the error when the run failed and the token usage once reported. Its
 * steps (thinking, tools, todos, clarifies) are the messages whose parent is this message.
 */
public record AssistantMessage(
        String id,
        String threadId,
        String runId,
        @Nullable String parentMessageId,
        MessageStatus status,
        Instant createdAt,
        String text,
        @Nullable ErrorInfo error,
        @Nullable TokenUsage usage)
        implements Message {

    public AssistantMessage {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(text, "text");
    }

    @Override
    public MessageKind kind() {
        return MessageKind.ASSISTANT;
    }
}
