package dev.parley.chat.engine;

import dev.parley.chat.ChatException;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.store.ThreadCursor;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One page of an owner's threads, newest activity first.
 *
 * @param threads the page, at most the limit asked for
 * @param nextCursor where the next page starts (pass it back as {@code cursor}); null on the last page
 */
public record ThreadPage(List<ChatThread> threads, @Nullable String nextCursor) {
    public ThreadPage {
        threads = List.copyOf(threads);
    }

    /** The opaque text form of a cursor: URL-safe, without padding. */
    static String encode(ThreadCursor cursor) {
        String plain = cursor.lastMessageAt().toEpochMilli() + ":" + cursor.id();
        return Base64.getUrlEncoder().withoutPadding().encodeToString(plain.getBytes(StandardCharsets.UTF_8));
    }

    /** @throws ChatException INVALID_INPUT if the text is not a cursor this class wrote */
    static ThreadCursor decode(String text) {
        try {
            String plain = new String(Base64.getUrlDecoder().decode(text), StandardCharsets.UTF_8);
            int colon = plain.indexOf(':');
            if (colon <= 0 || colon == plain.length() - 1) {
                throw new IllegalArgumentException("no separator");
            }
            return new ThreadCursor(Instant.ofEpochMilli(Long.parseLong(plain.substring(0, colon))),
                    plain.substring(colon + 1));
        } catch (IllegalArgumentException e) {
            throw ChatException.invalidInput("cursor is not one this server gave out");
        }
    }
}
