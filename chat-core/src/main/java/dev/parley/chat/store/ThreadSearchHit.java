package dev.parley.chat.store;

import dev.parley.chat.model.ChatThread;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A thread that matches a search.
 *
 * @param snippet a short piece of the matching text (the thread's newest matching message's, else the title),
 *     for showing
 * @param messageId the message the snippet is from, null when it is from the title
 */
public record ThreadSearchHit(ChatThread thread, String snippet, @Nullable String messageId) {
    public ThreadSearchHit {
        Objects.requireNonNull(thread, "thread");
        Objects.requireNonNull(snippet, "snippet");
    }
}
