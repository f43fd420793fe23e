package dev.parley.chat.engine;

import dev.parley.chat.model.RunStatus;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What {@code startRun} and {@code regenerate} return at once, while the work goes on in the background.
 *
 * @param userMessageId null for a regeneration
 * @param status RUNNING, or QUEUED behind another run (for a replay: the run's status now)
 * @param replayed true when the request repeated an earlier one (the same client message id): nothing was
 *     started, this is the first request's run
 */
public record RunTicket(
        String runId,
        String threadId,
        @Nullable String userMessageId,
        String assistantMessageId,
        RunStatus status,
        boolean replayed) {

    public RunTicket {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(assistantMessageId, "assistantMessageId");
        Objects.requireNonNull(status, "status");
    }

    /** A ticket for a run that was just started or queued. */
    public RunTicket(String runId, String threadId, @Nullable String userMessageId, String assistantMessageId,
            RunStatus status) {
        this(runId, threadId, userMessageId, assistantMessageId, status, false);
    }
}
