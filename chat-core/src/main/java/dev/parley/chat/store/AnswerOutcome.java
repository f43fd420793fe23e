package dev.parley.chat.store;

/** What {@link ChatStore#answerInput} did. */
public enum AnswerOutcome {
    /** The input was pending and now holds this answer. */
    ACCEPTED,
    /** The input already held this very answer; nothing changed. */
    REPLAYED,
    /** The input already held another answer, or expired, or was cancelled; nothing changed. */
    CONFLICT,
    /** No such input. */
    NOT_FOUND
}
