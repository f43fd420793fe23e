package dev.parley.chat.reduce;

import dev.parley.chat.model.Message;
import org.jspecify.annotations.Nullable;

/**
 * One message under construction in a {@link RunReducer}: its last immutable form plus a builder for its
 * streamed text, materialized (and cached) on demand. Not thread-safe: owned by its reducer.
 */
final class MessageSlot {
    Message base;
    final StringBuilder text = new StringBuilder();
    boolean dirty = true;
    @Nullable Message cached;

    MessageSlot(Message message) {
        replace(message);
    }

    void replace(Message message) {
        base = message;
        text.setLength(0);
        text.append(MessageCopies.streamedText(message));
        touch();
    }

    void touch() {
        dirty = true;
        cached = null;
    }

    Message materialize() {
        Message result = cached;
        if (result == null) {
            result = MessageCopies.withStreamedText(base, text);
            cached = result;
        }
        return result;
    }
}
