package dev.parley.chat.agent;

import java.util.Objects;

/**
 * A tool call a model made.
 *
 * @param id the model's id for the call, as the model gave it: the id its result is sent back under. Unique within
 *     one response; a model may repeat an earlier response's id (the agent loop still runs each call)
 * @param arguments the arguments, as JSON text
 */
public record ToolCall(String id, String name, String arguments) {
    public ToolCall {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(arguments, "arguments");
    }
}
