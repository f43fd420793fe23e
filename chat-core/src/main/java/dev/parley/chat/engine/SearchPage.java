package dev.parley.chat.engine;

import dev.parley.chat.ChatException;
import dev.parley.chat.store.SearchQuery;
import dev.parley.chat.store.ThreadSearchHit;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.zip.CRC32;
import org.jspecify.annotations.Nullable;

/**
 * One page of a search over an owner's threads, newest match first.
 *
 * @param hits the page, at most the limit asked for
 * @param nextCursor where the next page starts (pass it back as {@code cursor} with the same query); null on
 *     the last page
 */
public record SearchPage(List<ThreadSearchHit> hits, @Nullable String nextCursor) {
    public SearchPage {
        hits = List.copyOf(hits);
    }

    /**
     * The opaque text form of a cursor: how many hits came before the next page, and a fingerprint of the
     * query, so that a cursor is taken only with the query it was given for. URL-safe, without padding.
     */
    static String encode(SearchQuery query, long skip) {
        String plain = "s1:" + skip + ":" + fingerprint(query);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(plain.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * How many hits come before the page {@code text} starts.
     *
     * @throws ChatException INVALID_INPUT if the text is not a cursor this class wrote for this query
     */
    static long decode(String text, SearchQuery query) {
        String[] parts;
        try {
            parts = new String(Base64.getUrlDecoder().decode(text), StandardCharsets.UTF_8).split(":", -1);
        } catch (IllegalArgumentException notBase64) {
            throw notACursor();
        }
        if (parts.length != 3 || !parts[0].equals("s1") || !parts[2].equals(fingerprint(query))) {
            throw notACursor();
        }
        try {
            long skip = Long.parseLong(parts[1]);
            if (skip < 0) {
                throw notACursor();
            }
            return skip;
        } catch (NumberFormatException notANumber) {
            throw notACursor();
        }
    }

    private static ChatException notACursor() {
        return ChatException.invalidInput("cursor is not one this server gave out for this search");
    }

    private static String fingerprint(SearchQuery query) {
        CRC32 crc = new CRC32();
        crc.update(String.join("\u0000", query.words()).getBytes(StandardCharsets.UTF_8));
        crc.update(1);
        crc.update(String.join("\u0000", query.phrases()).getBytes(StandardCharsets.UTF_8));
        return Long.toHexString(crc.getValue());
    }
}
