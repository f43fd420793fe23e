package dev.parley.chat.store;

/** What {@link ChatStore#answerClarify} did. */
public enum AnswerOutcome {
    /** The clarify was pending and now holds this answer. */
    ACCEPTED,
    /** The clarify already held this very answer; nothing changed. */
    REPLAYED,
    /** The clarify already held another answer, or was cancelled; nothing changed. */
    CONFLICT,
    /** No such clarify. */
    NOT_FOUND
}
