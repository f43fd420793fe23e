package dev.parley.chat.model;

/** The kind of a {@link Message}; {@link #wireName()} is its JSON type discriminator. */
public enum MessageKind {
    USER("user"),
    ASSISTANT("assistant"),
    THINKING("thinking"),
    ACTION_EXECUTION("action_execution"),
    RESULT("result"),
    STATUS("status"),
    TODO("todo"),
    CLARIFY("clarify"),
    APPROVAL("approval"),
    ERROR("error");

    private final String wireName;

    MessageKind(String wireName) {
        this.wireName = wireName;
    }

    /** The stable name used as the {@code type} field in JSON. */
    public String wireName() {
        return wireName;
    }

    /** True for the kinds a conversation is paged by: user and assistant messages. */
    public boolean isTopLevel() {
        return this == USER || this == ASSISTANT;
    }
}
