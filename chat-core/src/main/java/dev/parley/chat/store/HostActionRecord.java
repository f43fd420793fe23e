package dev.parley.chat.store;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One execution of a host action, keyed by run id and execution id, so that a handler runs once per
 * execution id.
 *
 * @param claimedNow true if the {@link ChatStore#claimHostAction} call that returned this record created
 *     it (the caller must run the handler); false if it existed already
 * @param result null until completed
 */
public record HostActionRecord(
        String runId,
        String executionId,
        String name,
        String arguments,
        boolean claimedNow,
        @Nullable String result,
        boolean error,
        Instant claimedAt,
        @Nullable Instant completedAt) {

    public HostActionRecord {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(executionId, "executionId");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(arguments, "arguments");
        Objects.requireNonNull(claimedAt, "claimedAt");
    }

    public boolean isCompleted() {
        return completedAt != null;
    }
}
