package dev.parley.chat.input;

/** What a pending input asks of the person; {@link #wireName()} is its JSON name. */
public enum InputKind {
    /** A question, with choices or free text. */
    CLARIFY("clarify"),
    /** Whether a risky call may run. */
    APPROVAL("approval"),
    /** A tool the person's browser runs; its result is the answer. */
    CLIENT_TOOL("client_tool");

    private final String wireName;

    InputKind(String wireName) {
        this.wireName = wireName;
    }

    public String wireName() {
        return wireName;
    }
}
