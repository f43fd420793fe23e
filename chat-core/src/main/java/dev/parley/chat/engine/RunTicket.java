package dev.parley.chat.engine;

import dev.parley.chat.model.RunStatus;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What {@code startRun} and {@code regenerate} return at once, while the work goes on in the background.
 *
 * @param userMessageId null for a regeneration
 * @param status RUNNING, or QUEUED behind another run
 */
public record RunTicket(
        String runId,
        String threadId,
        @Nullable String userMessageId,
        String assistantMessageId,
        RunStatus status) {

    public RunTicket {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(assistantMessageId, "assistantMessageId");
        Objects.requireNonNull(status, "status");
    }
}
