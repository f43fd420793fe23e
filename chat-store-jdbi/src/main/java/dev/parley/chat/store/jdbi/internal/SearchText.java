package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.store.SearchQuery;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
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
        if (text == null || nextWord(text, 0) == text.length()) {
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
     * cast in SQL, it needs no parser and no dictionary. The text is lower-cased whole, then cut into words,
     * each cut at 64 characters, exactly as {@code SearchQuery} does. Words hold only letters and digits, so
     * nothing needs quoting; null for null.
     */
    public static @Nullable String vector(@Nullable String text) {
        if (text == null) {
            return null;
        }
        String lower = text.toLowerCase(Locale.ROOT);
        Map<String, int[]> counts = new HashMap<>();
        Map<String, StringBuilder> positions = new LinkedHashMap<>();
        int position = 0;
        for (int start = nextWord(lower, 0); start < lower.length(); start = nextWord(lower, start)) {
            int end = wordEnd(lower, start);
            String word = lower.substring(start, Math.min(end, start + MAX_WORD));
            start = end;
            position = Math.min(position + 1, MAX_POSITION);
            int[] count = counts.computeIfAbsent(word, k -> new int[1]);
            if (++count[0] <= MAX_POSITIONS_PER_WORD) {
                StringBuilder at = positions.get(word);
                if (at == null) {
                    positions.put(word, new StringBuilder().append(position));
                } else {
                    at.append(',').append(position);
                }
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

    /** Where the next word starts at or after {@code from}; the text's length if there is none. */
    private static int nextWord(String text, int from) {
        int at = from;
        while (at < text.length()) {
            int c = text.codePointAt(at);
            if (isWordCharacter(c)) {
                return at;
            }
            at += Character.charCount(c);
        }
        return at;
    }

    /** Where the word starting at {@code start} ends. */
    private static int wordEnd(String text, int start) {
        int at = start;
        while (at < text.length()) {
            int c = text.codePointAt(at);
            if (!isWordCharacter(c)) {
                return at;
            }
            at += Character.charCount(c);
        }
        return at;
    }

    /** A letter or a digit: what {@code SearchQuery}'s {@code [\p{L}\p{N}]} takes. */
    private static boolean isWordCharacter(int c) {
        switch (Character.getType(c)) {
            case Character.UPPERCASE_LETTER, Character.LOWERCASE_LETTER, Character.TITLECASE_LETTER,
                    Character.MODIFIER_LETTER, Character.OTHER_LETTER, Character.DECIMAL_DIGIT_NUMBER,
                    Character.LETTER_NUMBER, Character.OTHER_NUMBER:
                return true;
            default:
                return false;
        }
    }

    /**
     * About {@code words} words of {@code text} from shortly before the first place {@code query} matches (from
     * the start where it matches nowhere), with "…" where text is left out before or after; null for null. The
     * store's own cut, where the database's would run the query again per text (FTS5's snippet()).
     */
    static @Nullable String around(@Nullable String text, SearchQuery query, int words) {
        if (text == null) {
            return null;
        }
        List<SearchQuery.TextRange> matches = query.matchesIn(text);
        int at = matches.isEmpty() ? 0 : matches.get(0).start();
        List<int[]> tokens = new ArrayList<>();
        int first = -1;
        for (int start = nextWord(text, 0); start < text.length(); start = nextWord(text, start)) {
            int end = wordEnd(text, start);
            if (first < 0 && end > at) {
                first = tokens.size();
            }
            tokens.add(new int[] {start, end});
            start = end;
        }
        if (tokens.isEmpty()) {
            return text;
        }
        int from = Math.max(0, Math.min(Math.max(first, 0) - words / 4, tokens.size() - words));
        int to = Math.min(tokens.size(), from + words);
        int cutStart = from == 0 ? 0 : tokens.get(from)[0];
        int cutEnd = to == tokens.size() ? text.length() : tokens.get(to - 1)[1];
        return (from == 0 ? "" : "…") + text.substring(cutStart, cutEnd) + (to == tokens.size() ? "" : "…");
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
