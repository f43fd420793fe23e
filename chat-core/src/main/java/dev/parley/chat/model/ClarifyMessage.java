package dev.parley.chat.model;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A question from the agent back to the person (human in the loop). While it is
 * {@link MessageStatus#IN_PROGRESS} the run waits for input. {@code choices} may be empty (free text
 * only); {@code answer} is empty until answered and holds one entry for a free-text or single-choice
 * answer, one per chosen option for a multi-select answer.
 */
public record ClarifyMessage(
        String id,
        String threadId,
        String runId,
        @Nullable String parentMessageId,
        MessageStatus status,
        Instant createdAt,
        String clarifyId,
        String question,
        List<String> choices,
        boolean multiSelect,
        List<String> answer)
        implements Message {

    public ClarifyMessage {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(clarifyId, "clarifyId");
        Objects.requireNonNull(question, "question");
        choices = choices == null ? List.of() : List.copyOf(choices);
        answer = answer == null ? List.of() : List.copyOf(answer);
    }

    @Override
    public MessageKind kind() {
        return MessageKind.CLARIFY;
    }

    /** True while the question waits for an answer. */
    public boolean isPending() {
        return status == MessageStatus.IN_PROGRESS;
    }
}
