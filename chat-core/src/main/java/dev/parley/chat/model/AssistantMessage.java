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
 * @param suggestions the follow-up prompts made for this answer after its run ended, null until (and unless)
 *     some were made; see {@link Suggestions}
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
        boolean truncated,
        @Nullable Suggestions suggestions)
        implements Message {

    public AssistantMessage {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(text, "text");
    }

    /** An answer without follow-up suggestions. */
    public AssistantMessage(String id, String threadId, String runId, @Nullable String parentMessageId,
            MessageStatus status, Instant createdAt, String text, @Nullable ErrorInfo error, @Nullable TokenUsage usage,
            boolean truncated) {
        this(id, threadId, runId, parentMessageId, status, createdAt, text, error, usage, truncated, null);
    }

    /** An answer that was not cut off, without follow-up suggestions. */
    public AssistantMessage(String id, String threadId, String runId, @Nullable String parentMessageId,
            MessageStatus status, Instant createdAt, String text, @Nullable ErrorInfo error, @Nullable TokenUsage usage) {
        this(id, threadId, runId, parentMessageId, status, createdAt, text, error, usage, false, null);
    }

    /** The same answer with these follow-up suggestions. */
    public AssistantMessage withSuggestions(Suggestions value) {
        Objects.requireNonNull(value, "suggestions");
        return new AssistantMessage(id, threadId, runId, parentMessageId, status, createdAt, text, error, usage,
                truncated, value);
    }

    @Override
    public MessageKind kind() {
        return MessageKind.ASSISTANT;
    }
}
