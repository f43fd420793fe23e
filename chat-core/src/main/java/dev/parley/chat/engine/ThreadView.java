package dev.parley.chat.engine;

import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Message;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A page of a conversation, oldest first: the newest user and assistant messages before a cursor, each
 * assistant message followed by its steps (thinking, tools, todos, clarifies, statuses, errors).
 *
 * @param variants for every assistant message in the page, its place among the answers to the same user
 *     message
 * @param olderCursor pass it as {@code before} to get the previous page; null when there is none
 */
public record ThreadView(
        ChatThread thread,
        List<Message> messages,
        Map<String, VariantPosition> variants,
        @Nullable String olderCursor) {

    public ThreadView {
        Objects.requireNonNull(thread, "thread");
        messages = List.copyOf(messages);
        variants = Map.copyOf(variants);
    }
}
