package dev.parley.chat.input;

/** Where a pending input stands. Only {@link #PENDING} changes, once. */
public enum InputState {
    /** Waiting for the person. */
    PENDING,
    /** Answered (for an approval: decided, allow or deny; for a client tool: its result came). */
    ANSWERED,
    /** Its deadline passed first. */
    EXPIRED,
    /** The run ended (or the runtime withdrew it) first. */
    CANCELLED;

    public boolean isResolved() {
        return this != PENDING;
    }
}
