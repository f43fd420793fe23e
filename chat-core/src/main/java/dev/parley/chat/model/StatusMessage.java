package dev.parley.chat.model;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A live status line from the runtime ("searching the web…"). {@code level} is the runtime's category,
 * e.g. {@code lifecycle}, {@code warn}, {@code busy}; the newest status of a running run is its live
 * status.
 */
public record StatusMessage(
        String id,
        String threadId,
        String runId,
        @Nullable String parentMessageId,
        MessageStatus status,
        Instant createdAt,
        String level,
        String text)
        implements Message {

    public StatusMessage {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(level, "level");
        Objects.requireNonNull(text, "text");
    }

    @Override
    public MessageKind kind() {
        return MessageKind.STATUS;
    }
}
