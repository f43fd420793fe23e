package dev.parley.chat.store;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A clarify question as the store keeps it (seed 000's {@code WorkflowPause}): enough to show it again
 * after a reload, to check an answer, and to re-attach to the waiting runtime after a restart.
 *
 * @param resumeToken the adapter's position in the runtime stream, null if it cannot re-attach
 * @param answer empty unless {@link ClarifyState#ANSWERED}
 */
public record PendingClarify(
        String runId,
        String clarifyId,
        String messageId,
        String question,
        List<String> choices,
        boolean multiSelect,
        @Nullable String resumeToken,
        ClarifyState state,
        List<String> answer,
        Instant createdAt,
        @Nullable Instant answeredAt) {

    public PendingClarify {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(clarifyId, "clarifyId");
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(question, "question");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(createdAt, "createdAt");
        choices = choices == null ? List.of() : List.copyOf(choices);
        answer = answer == null ? List.of() : List.copyOf(answer);
    }
}
