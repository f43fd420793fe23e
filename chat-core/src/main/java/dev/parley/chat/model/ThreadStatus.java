package dev.parley.chat.model;

/** Whether a thread shows among the active conversations. Archived threads keep all their data. */
public enum ThreadStatus {
    ACTIVE,
    ARCHIVED
}
