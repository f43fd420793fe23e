package dev.parley.chat.runtime;

import java.util.Objects;

/** The outcome of a host action, handed back to the runtime so its loop continues. */
public record ToolResult(String runId, String executionId, String result, boolean error) {
    public ToolResult {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(executionId, "executionId");
        Objects.requireNonNull(result, "result");
    }
}
