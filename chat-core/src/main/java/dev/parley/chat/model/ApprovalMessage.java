package dev.parley.chat.model;

import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.InputState;
import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A call that waited (or waits) for a person's approval. While it is {@link MessageStatus#IN_PROGRESS}
 * the run waits; once decided it is COMPLETED with the {@code decision} (allowing or denying) and any
 * {@code editedArguments}; an approval that expired or was withdrawn is CANCELLED with {@code outcome}
 * saying which.
 *
 * @param inputId the pending input an answer names
 * @param request what was asked: the tool, its arguments, the description, the decisions offered
 * @param outcome null while pending; ANSWERED, EXPIRED or CANCELLED after
 */
public record ApprovalMessage(
        String id,
        String threadId,
        String runId,
        @Nullable String parentMessageId,
        MessageStatus status,
        Instant createdAt,
        String inputId,
        ApprovalRequest request,
        @Nullable InputState outcome,
        @Nullable ApprovalDecision decision,
        @Nullable String editedArguments)
        implements Message {

    public ApprovalMessage {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(inputId, "inputId");
        Objects.requireNonNull(request, "request");
    }

    @Override
    public MessageKind kind() {
        return MessageKind.APPROVAL;
    }

    /** True while the call waits for a decision. */
    public boolean isPending() {
        return status == MessageStatus.IN_PROGRESS;
    }

    /** The same approval with another status (the run ended, or the decision came). */
    public ApprovalMessage withStatus(MessageStatus to) {
        return new ApprovalMessage(id, threadId, runId, parentMessageId, to, createdAt, inputId, request,
                outcome != null || to == MessageStatus.IN_PROGRESS ? outcome : InputState.CANCELLED, decision,
                editedArguments);
    }
}
