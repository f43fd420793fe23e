package dev.parley.chat.engine;

import dev.parley.chat.runtime.HostToolSpec;
import java.util.Objects;

/**
 * A tool the host offers the agent (an agent action): what it is, what runs it, and
 * whether a person approves a call first.
 */
public record HostAction(HostToolSpec spec, HostActionHandler handler, HostActionApproval approval) {
    public HostAction {
        Objects.requireNonNull(spec, "spec");
        Objects.requireNonNull(handler, "handler");
        Objects.requireNonNull(approval, "approval");
    }

    /** A host action that runs without approval. */
    public HostAction(HostToolSpec spec, HostActionHandler handler) {
        this(spec, handler, HostActionApproval.never());
    }
}
