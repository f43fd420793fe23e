package dev.parley.chat.agent;

import java.util.Objects;

/**
 * A tool call a model made.
 *
 * @param id the model's id for the call (unique within the run)
 * @param arguments the arguments, as JSON text
 */
public record ToolCall(String id, String name, String arguments) {
    public ToolCall {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(arguments, "arguments");
    }
}
