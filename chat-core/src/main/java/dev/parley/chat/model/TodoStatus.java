package dev.parley.chat.model;

/** The state of one todo item, as Hermes' {@code todo} tool reports it. */
public enum TodoStatus {
    PENDING,
    IN_PROGRESS,
    COMPLETED,
    CANCELLED
}
