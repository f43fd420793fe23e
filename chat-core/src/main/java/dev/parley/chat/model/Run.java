package dev.parley.chat.model;

import java.time.Instant;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One agent turn on a thread.
 *
 * @param userMessageId the user message that started the run; null for a regeneration
 * @param assistantMessageId the answer this run writes
 * @param input the user's text the runtime works on (for a regeneration, the text of the message being
 *     answered again)
 * @param maxIterations the runtime's iteration budget, null for its default
 * @param context free-form context handed to the runtime (JSON-compatible values)
 * @param error why the run failed, null unless FAILED (or INTERRUPTED with a reason)
 * @param usage the token usage the runtime reported, null if none
 * @param guardrailsFailureReason why the runtime's guardrails refused, null if they did not
 */
public record Run(
        String id,
        String threadId,
        String ownerId,
        RunStatus status,
        @Nullable String userMessageId,
        String assistantMessageId,
        String input,
        @Nullable String modelId,
        @Nullable String skill,
        @Nullable Integer maxIterations,
        Map<String, Object> context,
        Instant createdAt,
        @Nullable Instant startedAt,
        @Nullable Instant finishedAt,
        @Nullable ErrorInfo error,
        @Nullable TokenUsage usage,
        @Nullable String guardrailsFailureReason) {

    public Run {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(ownerId, "ownerId");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(assistantMessageId, "assistantMessageId");
        Objects.requireNonNull(input, "input");
        Objects.requireNonNull(createdAt, "createdAt");
        context = context == null ? Map.of() : Map.copyOf(context);
    }

    /** True for a regeneration: the run answers an existing user message again. */
    public boolean isRegeneration() {
        return userMessageId == null;
    }

    public Run withStatus(RunStatus newStatus) {
        return new Run(id, threadId, ownerId, newStatus, userMessageId, assistantMessageId, input, modelId, skill,
                maxIterations, context, createdAt, startedAt, finishedAt, error, usage, guardrailsFailureReason);
    }

    public Run started(Instant at) {
        return new Run(id, threadId, ownerId, RunStatus.RUNNING, userMessageId, assistantMessageId, input, modelId,
                skill, maxIterations, context, createdAt, at, finishedAt, error, usage, guardrailsFailureReason);
    }

    /** This run ended: status, end time and the outcome details. */
    public Run finished(RunStatus terminal, Instant at, @Nullable ErrorInfo failure, @Nullable TokenUsage tokens,
            @Nullable String guardrails) {
        if (!terminal.isTerminal()) {
            throw new IllegalArgumentException(terminal + " is not terminal");
        }
        return new Run(id, threadId, ownerId, terminal, userMessageId, assistantMessageId, input, modelId, skill,
                maxIterations, context, createdAt, startedAt, at, failure, tokens, guardrails);
    }
}
