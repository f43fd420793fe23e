package dev.parley.chat.engine;

import java.util.Objects;

/** One call of a host action: who asked, and the arguments as JSON text. */
public record HostActionCall(
        String threadId,
        String runId,
        String ownerId,
        String executionId,
        String name,
        String arguments) {

    public HostActionCall {
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(ownerId, "ownerId");
        Objects.requireNonNull(executionId, "executionId");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(arguments, "arguments");
    }
}
