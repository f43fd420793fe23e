package dev.parley.chat.engine;

/** When a {@link HostAction} needs a person's approval before its handler runs. */
public enum ApprovalPolicy {
    /** Never: the handler runs as soon as the agent calls it. */
    NEVER,
    /** Every call waits for the person to allow it (allow once or deny). */
    ALWAYS,
    /**
     * The first call in a conversation waits; the person may allow it once or for the whole conversation,
     * which is remembered in the store (across runs and restarts) until the thread is deleted.
     */
    ONCE_PER_THREAD
}
