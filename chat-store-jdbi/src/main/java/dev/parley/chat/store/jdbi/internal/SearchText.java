package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.UserMessage;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * What the search index holds of a message or a title. A searchable text is a user's or an assistant's text,
 * its first {@value #MAX_CHARS} characters; its words are what chat-core's {@code SearchQuery} calls words:
 * runs of letters and digits, lower-cased. SQLite's FTS5 tokenizer is configured to cut the same words;
 * for PostgreSQL the store writes the vector itself ({@link #vector}), so that both databases find the
 * words a person types, also inside a path or an address ({@code src/config.yml}).
 */
public final class SearchText {
    /** How much of a text is searchable: bounds the index per message (PostgreSQL's tsvector takes 1 MB at most). */
    public static final int MAX_CHARS = 100_000;
    /** A word longer than this is indexed by its first 64 characters ({@code SearchQuery} cuts its words there too). */
    static final int MAX_WORD = 64;
    /** PostgreSQL keeps positions up to 16 383, and 256 of them per lexeme. */
    private static final int MAX_POSITION = 16_383;
    private static final int MAX_POSITIONS_PER_WORD = 256;
    private static final Pattern WORD = Pattern.compile("[\\p{L}\\p{N}]+");

    private SearchText() {
    }

    /** The searchable text of a message: a user's or an assistant's text (capped), null for steps or a text without words. */
    public static @Nullable String of(Message message) {
        if (message instanceof UserMessage user) {
            return of(user.text());
        }
        if (message instanceof AssistantMessage answer) {
            return of(answer.text());
        }
        return null;
    }

    /** A text as it is indexed (its first {@value #MAX_CHARS} characters), null if it holds no word. */
    public static @Nullable String of(@Nullable String text) {
        if (text == null || !WORD.matcher(text).find()) {
            return null;
        }
        if (text.length() <= MAX_CHARS) {
            return text;
        }
        int end = Character.isHighSurrogate(text.charAt(MAX_CHARS - 1)) ? MAX_CHARS - 1 : MAX_CHARS;
        return text.substring(0, end);
    }

    /**
     * A PostgreSQL {@code tsvector} literal of a text's words with their positions ({@code 'day':2 'lisbon':3,7}):
     * cast in SQL, it needs no parser and no dictionary. Words hold only letters and digits, so nothing needs
     * quoting; null for null.
     */
    public static @Nullable String vector(@Nullable String text) {
        if (text == null) {
            return null;
        }
        Map<String, StringBuilder> positions = new LinkedHashMap<>();
        Map<String, Integer> counts = new LinkedHashMap<>();
        Matcher word = WORD.matcher(text.toLowerCase(Locale.ROOT));
        int position = 0;
        while (word.find()) {
            String w = word.group();
            if (w.length() > MAX_WORD) {
                w = w.substring(0, Character.isHighSurrogate(w.charAt(MAX_WORD - 1)) ? MAX_WORD - 1 : MAX_WORD);
            }
            position = Math.min(position + 1, MAX_POSITION);
            int count = counts.merge(w, 1, Integer::sum);
            if (count <= MAX_POSITIONS_PER_WORD) {
                StringBuilder at = positions.computeIfAbsent(w, k -> new StringBuilder());
                at.append(at.length() == 0 ? "" : ",").append(position);
            }
        }
        StringBuilder literal = new StringBuilder(text.length() + positions.size() * 4);
        for (Map.Entry<String, StringBuilder> entry : positions.entrySet()) {
            if (literal.length() > 0) {
                literal.append(' ');
            }
            literal.append('\'').append(entry.getKey()).append("':").append(entry.getValue());
        }
        return literal.toString();
    }

    /** A snippet as a hit shows it: whitespace folded, at most {@code max} characters. */
    static String snippet(@Nullable String raw, int max) {
        String folded = raw == null ? "" : raw.strip().replaceAll("\\s+", " ");
        if (folded.length() <= max) {
            return folded;
        }
        int end = max - 1;
        if (Character.isHighSurrogate(folded.charAt(end - 1))) {
            end--;
        }
        return folded.substring(0, end) + "…";
    }
}
