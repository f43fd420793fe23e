package dev.parley.chat.model;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** The agent's current todo list. Each update replaces the whole list. */
public record TodoMessage(
        String id,
        String threadId,
        String runId,
        @Nullable String parentMessageId,
        MessageStatus status,
        Instant createdAt,
        List<TodoItem> items)
        implements Message {

    public TodoMessage {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(createdAt, "createdAt");
        items = items == null ? List.of() : List.copyOf(items);
    }

    @Override
    public MessageKind kind() {
        return MessageKind.TODO;
    }
}
