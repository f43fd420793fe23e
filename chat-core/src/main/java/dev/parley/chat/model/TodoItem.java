package dev.parley.chat.model;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** One item of the agent's todo list; {@code parent} is the id of the item it belongs under, if any. */
public record TodoItem(String id, String content, TodoStatus status, @Nullable String parent) {
    public TodoItem {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(content, "content");
        Objects.requireNonNull(status, "status");
    }
}
