package dev.parley.chat.runtime;

/** Optional abilities of a runtime; each one names the {@link RuntimeAdapter} calls that come with it. */
public enum Capability {
    /** Clarify questions can be answered: {@link RuntimeAdapter#answerClarify(ClarifyReply)}. */
    CLARIFY,
    /** A run can be stopped on the runtime's side: {@link RuntimeAdapter#cancel(String)}. */
    CANCEL,
    /** Host actions can be called: {@link RuntimeAdapter#submitToolResult(ToolResult)}. */
    HOST_TOOLS,
    /**
     * A waiting run can be re-attached to after the host restarted:
     * {@link RuntimeAdapter#reattach(RunRequest, String)}.
     */
    REATTACH
}
