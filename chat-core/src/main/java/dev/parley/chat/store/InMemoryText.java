package dev.parley.chat.store;

import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.UserMessage;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * How {@link InMemoryChatStore} searches: a text matches when it holds every word (as a word prefix, as
 * full-text engines do with stemming off) and every phrase ({@link #matches}).
 */
final class InMemoryText {
    private static final Pattern WORD = Pattern.compile("[\\p{L}\\p{N}]+");
    private static final int SNIPPET_CONTEXT = 40;

    private InMemoryText() {
    }

    /** The searchable text of a message: a user's or an assistant's text, else null. */
    static @Nullable String searchable(Message message) {
        if (message instanceof UserMessage user) {
            return user.text();
        }
        if (message instanceof AssistantMessage answer) {
            return answer.text();
        }
        return null;
    }

    /** Whether {@code text} holds every word of the query (as a word prefix) and every phrase. */
    static boolean matches(@Nullable String text, SearchQuery query) {
        return score(text, query) > 0;
    }

    /** How well {@code text} matches, 0 if it does not. */
    static int score(@Nullable String text, SearchQuery query) {
        if (text == null || text.isEmpty()) {
            return 0;
        }
        List<String> words = words(text);
        String joined = String.join(" ", words);
        int score = 0;
        for (String word : query.words()) {
            int hits = (int) words.stream().filter(w -> w.startsWith(word)).count();
            if (hits == 0) {
                return 0;
            }
            score += hits;
        }
        for (String phrase : query.phrases()) {
            int hits = 0;
            for (int at = joined.indexOf(phrase); at >= 0; at = joined.indexOf(phrase, at + 1)) {
                hits++;
            }
            if (hits == 0) {
                return 0;
            }
            score += hits * 2;
        }
        return score;
    }

    /** A piece of {@code text} around the first term found, at most about 80 characters. */
    static String snippet(String text, SearchQuery query) {
        String lower = text.toLowerCase(Locale.ROOT);
        int at = -1;
        for (String term : query.allWords()) {
            int found = lower.indexOf(term);
            if (found >= 0 && (at < 0 || found < at)) {
                at = found;
            }
        }
        int from = Math.max(0, at - SNIPPET_CONTEXT);
        int to = Math.min(text.length(), Math.max(at, 0) + SNIPPET_CONTEXT * 2);
        return (from > 0 ? "…" : "") + text.substring(from, to).strip() + (to < text.length() ? "…" : "");
    }

    private static List<String> words(String text) {
        Matcher matcher = WORD.matcher(text.toLowerCase(Locale.ROOT));
        List<String> words = new java.util.ArrayList<>();
        while (matcher.find()) {
            words.add(matcher.group());
        }
        return words;
    }
}
