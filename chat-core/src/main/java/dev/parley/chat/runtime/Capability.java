package dev.parley.chat.runtime;

/** Optional abilities of a runtime; each one names the {@link RuntimeAdapter} calls that come with it. */
public enum Capability {
    /** Clarify questions can be answered: {@link RuntimeAdapter#answerClarify(ClarifyReply)}. */
    CLARIFY,
    /**
     * The runtime asks approvals itself ({@code InputRequested} with an approval) and takes the person's
     * decision: {@link RuntimeAdapter#answerApproval(ApprovalReply)}.
     */
    APPROVALS,
    /**
     * A run can be stopped on the runtime's side: {@link RuntimeAdapter#cancel(String)}, and a run a previous
     * host process left that cannot be followed: {@link RuntimeAdapter#stopOrphan(String, String)}.
     */
    CANCEL,
    /**
     * Host actions and tools the person's browser runs (client tools) can be called:
     * {@link RuntimeAdapter#submitToolResult(ToolResult)}.
     */
    HOST_TOOLS,
    /**
     * A run the runtime carries on can be re-attached to after the host restarted — one waiting for an
     * answer, and one that streams, from the last position its stream reported
     * ({@link ResumableSubscriber}): {@link RuntimeAdapter#reattach(RunRequest, String)}.
     */
    REATTACH,
    /**
     * A run the runtime does not carry across host processes (it keeps nothing: a loop inside the host) can be
     * continued from what is stored after the host restarted, when it was waiting for the results of host
     * actions the person had not approved yet: {@link RuntimeAdapter#resume(RunRequest, RunProgress)}.
     */
    RESUME
}
