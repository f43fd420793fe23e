package dev.parley.chat.engine;

/** How {@link ChatEngine#exportThread} writes a thread. */
public enum ExportFormat {
    /**
     * Everything, as JSON ({@code application/json}): the thread, every message of every branch (variants,
     * edits, thinking and tool steps, inputs), the feedback and usage; shape {@code parley-thread} version 1,
     * documented in {@code docs/EXPORT.md}.
     */
    JSON,
    /** The active branch as a person reads it, as Markdown ({@code text/markdown}). */
    MARKDOWN
}
