package dev.parley.chat.input;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A pending input as the engine and the store keep it: enough to show it again after a reload, to check
 * an answer's shape, and to re-attach to a waiting runtime after a restart.
 *
 * @param inputId unique within its run
 * @param messageId the message that shows it (a clarify or approval message; for a client tool, the call)
 * @param deadline when it expires if still pending; null for never
 * @param resumeToken the adapter's position in the runtime stream, null if it cannot re-attach
 * @param answer set when {@link InputState#ANSWERED}
 * @param resolvedAt set once resolved
 */
public record PendingInput(
        String runId,
        String inputId,
        String messageId,
        InputRequest request,
        @Nullable Instant deadline,
        @Nullable String resumeToken,
        InputState state,
        @Nullable InputAnswer answer,
        Instant createdAt,
        @Nullable Instant resolvedAt) {

    public PendingInput {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(inputId, "inputId");
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(request, "request");
        Objects.requireNonNull(state, "state");
        Objects.requireNonNull(createdAt, "createdAt");
    }

    public InputKind kind() {
        return request.kind();
    }

    /** The same input, resolved. */
    public PendingInput resolved(InputState to, @Nullable InputAnswer with, Instant at) {
        return new PendingInput(runId, inputId, messageId, request, deadline, resumeToken, to, with, createdAt, at);
    }
}
