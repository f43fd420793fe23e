package dev.parley.chat.model;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The agent's answer in a run. Created as an {@link MessageStatus#IN_PROGRESS} placeholder when the run
 * starts; holds the final text, the error when the run failed and the token usage once reported. Its
 * steps (thinking, tools, todos, clarifies) are the messages whose parent is this message.
 *
 * @param truncated true when the model stopped at its length limit (its maximum output tokens): the run
 *     succeeded, but the answer is cut off; a page says so beside it
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
        @Nullable TokenUsage usage,
        boolean truncated)
        implements Message {

    public AssistantMessage {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(text, "text");
    }

    /** An answer that was not cut off. */
    public AssistantMessage(String id, String threadId, String runId, @Nullable String parentMessageId,
            MessageStatus status, Instant createdAt, String text, @Nullable ErrorInfo error, @Nullable TokenUsage usage) {
        this(id, threadId, runId, parentMessageId, status, createdAt, text, error, usage, false);
    }

    @Override
    public MessageKind kind() {
        return MessageKind.ASSISTANT;
    }
}
