package dev.parley.chat.input;

import java.util.Objects;

/**
 * A tool call the person's browser runs (a tool the page registered); the run waits for its result.
 *
 * @param executionId the tool call this input stands for
 * @param arguments the call's arguments, as JSON text
 * @param parameters the tool's JSON Schema, as JSON text
 */
public record ClientToolRequest(String executionId, String toolName, String arguments, String parameters)
        implements InputRequest {
    public ClientToolRequest {
        Objects.requireNonNull(executionId, "executionId");
        Objects.requireNonNull(toolName, "toolName");
        Objects.requireNonNull(arguments, "arguments");
        Objects.requireNonNull(parameters, "parameters");
    }

    @Override
    public InputKind kind() {
        return InputKind.CLIENT_TOOL;
    }
}
