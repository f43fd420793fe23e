package dev.parley.chat.store;

import dev.parley.chat.ChatException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A search over an owner's threads, already taken apart: the words that must all occur, and the phrases
 * that must occur as written. Whatever a person types reads as one: words are runs of letters and digits,
 * a phrase is text between double quotes, and everything else — operators, punctuation, a lone quote — is
 * a separator, never syntax, so a store can pass terms to its full-text engine without escaping worries.
 *
 * @param words lower-cased, each 1 to 64 characters
 * @param phrases lower-cased, each of two words or more, joined by single spaces
 */
public record SearchQuery(List<String> words, List<String> phrases) {
    /** The most words and phrases one query may hold. */
    public static final int MAX_TERMS = 16;
    private static final int MAX_LENGTH = 500;
    private static final Pattern PHRASE = Pattern.compile("\"([^\"]*)\"");
    private static final Pattern WORD = Pattern.compile("[\\p{L}\\p{N}]+");

    public SearchQuery {
        words = List.copyOf(words);
        phrases = List.copyOf(phrases);
    }

    /**
     * Reads what a person typed.
     *
     * @throws ChatException INVALID_INPUT for text longer than 500 characters, with no word in it, or with
     *     more than {@value #MAX_TERMS} words and phrases
     */
    public static SearchQuery of(String text) {
        if (text == null || text.length() > MAX_LENGTH) {
            throw ChatException.invalidInput("a search is 1 to " + MAX_LENGTH + " characters");
        }
        String lower = text.toLowerCase(Locale.ROOT);
        List<String> phrases = new ArrayList<>();
        List<String> words = new ArrayList<>();
        Matcher quoted = PHRASE.matcher(lower);
        StringBuilder rest = new StringBuilder();
        int at = 0;
        while (quoted.find()) {
            rest.append(lower, at, quoted.start()).append(' ');
            List<String> inside = words(quoted.group(1));
            if (inside.size() == 1) {
                words.add(inside.get(0));
            } else if (!inside.isEmpty()) {
                phrases.add(String.join(" ", inside));
            }
            at = quoted.end();
        }
        rest.append(lower.substring(at));
        for (String word : words(rest.toString())) {
            if (!words.contains(word)) {
                words.add(word);
            }
        }
        if (words.isEmpty() && phrases.isEmpty()) {
            throw ChatException.invalidInput("a search needs at least one word");
        }
        if (words.size() + phrases.size() > MAX_TERMS) {
            throw ChatException.invalidInput("a search holds at most " + MAX_TERMS + " words and phrases");
        }
        return new SearchQuery(words, phrases);
    }

    private static List<String> words(String text) {
        List<String> found = new ArrayList<>();
        Matcher word = WORD.matcher(text);
        while (word.find()) {
            String w = word.group();
            found.add(w.length() > 64 ? w.substring(0, 64) : w);
        }
        return found;
    }

    /** A range of characters of a text, {@code start} inclusive, {@code end} exclusive. */
    public record TextRange(int start, int end) {
        public TextRange {
            if (start < 0 || end <= start) {
                throw new IllegalArgumentException("a range is 0 <= start < end, got " + start + ".." + end);
            }
        }
    }

    /**
     * Where the query matches in {@code text}, for marking it (a hit's snippet, a message): the words a query word
     * begins (a word is a run of letters and digits; case ignored), and the words of each place a phrase occurs
     * as written. In order, none overlapping; empty where nothing matches.
     */
    public List<TextRange> matchesIn(String text) {
        List<TextRange> found = new ArrayList<>();
        List<TextRange> tokens = new ArrayList<>();
        List<String> lowered = new ArrayList<>();
        Matcher word = WORD.matcher(text);
        while (word.find()) {
            tokens.add(new TextRange(word.start(), word.end()));
            lowered.add(word.group().toLowerCase(Locale.ROOT));
        }
        boolean[] marked = new boolean[tokens.size()];
        for (int i = 0; i < tokens.size(); i++) {
            String token = lowered.get(i);
            for (String w : words) {
                if (token.startsWith(w)) {
                    marked[i] = true;
                    break;
                }
            }
        }
        for (String phrase : phrases) {
            String[] parts = phrase.split(" ");
            for (int i = 0; i + parts.length <= tokens.size(); i++) {
                boolean here = true;
                for (int k = 0; k < parts.length && here; k++) {
                    here = lowered.get(i + k).equals(parts[k]);
                }
                if (here) {
                    for (int k = 0; k < parts.length; k++) {
                        marked[i + k] = true;
                    }
                }
            }
        }
        for (int i = 0; i < tokens.size(); i++) {
            if (marked[i]) {
                found.add(tokens.get(i));
            }
        }
        return found;
    }

    /** Every word of the query, phrases' words included, in order. */
    public List<String> allWords() {
        List<String> all = new ArrayList<>(words);
        for (String phrase : phrases) {
            for (String word : phrase.split(" ")) {
                all.add(word);
            }
        }
        return all;
    }
}
