package dev.parley.chat.engine;

import java.util.Objects;

/**
 * The run a {@link HostActionSource} is asked about: whose it is, in which thread.
 *
 * @param ownerId the owner the run belongs to (the person, or whatever the host calls an owner)
 * @param threadId the run's thread
 * @param runId the run
 */
public record HostActionScope(String ownerId, String threadId, String runId) {
    public HostActionScope {
        Objects.requireNonNull(ownerId, "ownerId");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
    }
}
