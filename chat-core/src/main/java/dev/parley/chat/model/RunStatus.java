package dev.parley.chat.model;

/**
 * A run's life: {@code QUEUED → RUNNING ⇄ WAITING_FOR_INPUT → SUCCEEDED | FAILED | CANCELLED |
 * INTERRUPTED}. A queued run may also be cancelled before it starts. Terminal states never change.
 */
public enum RunStatus {
    /** Waiting for an earlier run on the same thread (the ENQUEUE double-texting strategy). */
    QUEUED,
    /** The runtime is working. */
    RUNNING,
    /** The runtime asked a clarify question and waits for the answer. */
    WAITING_FOR_INPUT,
    SUCCEEDED,
    FAILED,
    /** Stopped on request; the partial answer is kept. */
    CANCELLED,
    /** The host process went away while the run was active; the partial answer is kept. */
    INTERRUPTED;

    public boolean isTerminal() {
        return this == SUCCEEDED || this == FAILED || this == CANCELLED || this == INTERRUPTED;
    }

    /** True for RUNNING and WAITING_FOR_INPUT: a thread with such a run is busy. */
    public boolean isActive() {
        return this == RUNNING || this == WAITING_FOR_INPUT;
    }

    /** The status an in-progress message takes when a run ends with this status. */
    public MessageStatus finalMessageStatus() {
        switch (this) {
            case SUCCEEDED:
                return MessageStatus.COMPLETED;
            case FAILED:
                return MessageStatus.FAILED;
            case CANCELLED:
                return MessageStatus.CANCELLED;
            case INTERRUPTED:
                return MessageStatus.INTERRUPTED;
            default:
                throw new IllegalStateException(this + " is not terminal");
        }
    }
}
