package dev.parley.chat.runtime;

import java.util.Objects;

/**
 * A tool the host offers to the agent (an agent action): its name, what it does, and its
 * parameters as a JSON Schema (JSON text).
 */
public record HostToolSpec(String name, String description, String parametersSchema) {
    public HostToolSpec {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(description, "description");
        Objects.requireNonNull(parametersSchema, "parametersSchema");
    }
}
