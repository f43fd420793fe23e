package dev.parley.chat.engine;

import dev.parley.chat.runtime.HostToolSpec;
import java.util.Objects;

/** A tool the host offers the agent (seed 004's {@code useAgentAction}): what it is, and what runs it. */
public record HostAction(HostToolSpec spec, HostActionHandler handler) {
    public HostAction {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(handler, "handler");
    }
}
