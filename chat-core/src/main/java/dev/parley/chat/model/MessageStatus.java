package dev.parley.chat.model;

/** Where a message stands. Only {@link #IN_PROGRESS} may still change. */
public enum MessageStatus {
    /** Still being written (streaming text, a running tool, an unanswered clarify). */
    IN_PROGRESS,
    /** Complete. User messages are complete as soon as they are stored. */
    COMPLETED,
    /** The run failed while this message was in progress; partial content is kept. */
    FAILED,
    /** The run was stopped while this message was in progress; partial content is kept. */
    CANCELLED,
    /** The host process went away while this message was in progress; partial content is kept. */
    INTERRUPTED;

    public boolean isFinal() {
        return this != IN_PROGRESS;
    }
}
