package dev.parley.chat.input;

/** What a person decides about a call that waits for approval; {@link #wireName()} is its JSON name. */
public enum ApprovalDecision {
    /** Run it, this time. Always offered. */
    ALLOW_ONCE("allow_once"),
    /** Run it, and calls of the same tool in this conversation from now on. Offered when the asker says so. */
    ALLOW_FOR_THREAD("allow_for_thread"),
    /** Run it, and every later call of the same tool. Offered when the asker says so. */
    ALWAYS_ALLOW("always_allow"),
    /** Do not run it. Always offered. */
    DENY("deny");

    private final String wireName;

    ApprovalDecision(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }

    /** True for every decision but {@link #DENY}. */
    public boolean allows() {
        return this != DENY;
    }
}
