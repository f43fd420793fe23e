package dev.parley.chat.engine;

/** What happened to a clarify answer. */
public enum AnswerResult {
    /** The answer was new and reached the runtime. */
    ACCEPTED,
    /** The same answer had been given before; nothing was sent again. */
    REPLAYED
}
