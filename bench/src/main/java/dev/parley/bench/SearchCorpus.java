package dev.parley.bench;

import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.UserMessage;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;

/**
 * The search section's conversations, made from a seed so that every pass makes the same ones: {@code threads}
 * threads of one owner, each {@code perThread} user and assistant messages in turn (each following the one
 * before, as the engine stores them), titled by their first message as the engine titles them. The text is
 * drawn from {@value #VOCABULARY} made-up words of six letters (none a prefix of another, so a word's prefix
 * search finds exactly that word) with Zipf-distributed frequencies, as natural text has: a few words in most
 * messages, a long tail in a few. Questions have 8–20 words, answers 20–80, with punctuation; one message in
 * 1 000 holds the phrase "tile museum", one in 200 each of its words alone.
 */
final class SearchCorpus {
    static final int VOCABULARY = 30_000;
    static final String PHRASE = "tile museum";
    private static final Instant T0 = Instant.parse("2026-06-01T00:00:00Z");

    final int threads;
    final int perThread;
    private final String[] words = new String[VOCABULARY];
    private final double[] cumulative = new double[VOCABULARY];
    private final Map<String, Integer> index = new HashMap<>();
    /** How many messages hold each word (filled by {@link #countWords}). */
    private final int[] messagesWith = new int[VOCABULARY];

    SearchCorpus(int threads, int perThread) {
        this.threads = threads;
        this.perThread = perThread;
        Random random = new Random(1);
        String consonants = "bcdfghjklmnprstvwxyz";
        String vowels = "aeiou";
        Set<String> made = new HashSet<>();
        for (int i = 0; i < VOCABULARY; ) {
            StringBuilder w = new StringBuilder(6);
            for (int s = 0; s < 3; s++) {
                w.append(consonants.charAt(random.nextInt(consonants.length()))).append(vowels.charAt(random.nextInt(5)));
            }
            if (made.add(w.toString())) {
                index.put(w.toString(), i);
                words[i++] = w.toString();
            }
        }
        double sum = 0;
        for (int rank = 0; rank < VOCABULARY; rank++) {
            sum += 1.0 / (rank + 1);
            cumulative[rank] = sum;
        }
        for (int rank = 0; rank < VOCABULARY; rank++) {
            cumulative[rank] /= sum;
        }
    }

    long messages() {
        return (long) threads * perThread;
    }

    /** The thread of index {@code t}: its newest activity is later the greater {@code t} is. */
    ChatThread thread(int t, String owner) {
        String first = text(new Random(seed(t, 0)), 0);
        Instant at = T0.plusSeconds(t);
        return new ChatThread("thread-" + t, owner, first.length() > 30 ? first.substring(0, 30) : first, null, null, null,
                ThreadStatus.ACTIVE, at, at);
    }

    /** The messages of thread {@code t}, oldest first. */
    List<Message> messages(int t) {
        List<Message> messages = new ArrayList<>(perThread);
        String threadId = "thread-" + t;
        String parent = null;
        Instant at = T0.plusSeconds(t);
        for (int m = 0; m < perThread; m++) {
            String id = threadId + "-" + m;
            String run = threadId + "-r" + m / 2;
            String text = text(new Random(seed(t, m)), m);
            messages.add(m % 2 == 0 ? new UserMessage(id, threadId, run, parent, MessageStatus.COMPLETED, at, text)
                    : new AssistantMessage(id, threadId, run, parent, MessageStatus.COMPLETED, at, text, null, null));
            parent = id;
        }
        return messages;
    }

    private static long seed(int thread, int message) {
        return thread * 1_000_003L + message;
    }

    private String text(Random random, int index) {
        int length = index % 2 == 0 ? 8 + random.nextInt(13) : 20 + random.nextInt(61);
        StringBuilder text = new StringBuilder(length * 8);
        for (int i = 0; i < length; i++) {
            String word = words[rank(random.nextDouble())];
            text.append(i == 0 ? Character.toUpperCase(word.charAt(0)) + word.substring(1) : word);
            int mark = random.nextInt(20);
            text.append(i == length - 1 ? "." : mark == 0 ? ". " : mark == 1 ? ", " : " ");
        }
        int planted = random.nextInt(1000);
        if (planted == 0) {
            text.append(" The ").append(PHRASE).append(" opens at ten.");
        } else if (planted <= 5) {
            text.append(" A tile, perhaps.");
        } else if (planted <= 10) {
            text.append(" Which museum?");
        }
        return text.toString();
    }

    private int rank(double u) {
        int at = Arrays.binarySearch(cumulative, u);
        return Math.min(VOCABULARY - 1, at >= 0 ? at : -at - 1);
    }

    /** Counts, over the whole corpus, how many messages hold each word (made again from the seeds, not stored). */
    void countWords() {
        for (int t = 0; t < threads; t++) {
            for (Message message : messages(t)) {
                Set<Integer> seen = new LinkedHashSet<>();
                for (String w : SearchBench.text(message).toLowerCase(Locale.ROOT).split("[^a-z]+")) {
                    int rank = index.getOrDefault(w, -1);
                    if (rank >= 0 && seen.add(rank)) {
                        messagesWith[rank]++;
                    }
                }
            }
        }
    }

    /** The word held by the number of messages closest to {@code share} of them (after {@link #countWords}). */
    String wordInShare(double share, Set<String> not) {
        double want = share * messages();
        int best = -1;
        for (int i = 0; i < VOCABULARY; i++) {
            if (!not.contains(words[i]) && (best < 0 || Math.abs(messagesWith[i] - want) < Math.abs(messagesWith[best] - want))) {
                best = i;
            }
        }
        return words[best];
    }

    /** How many messages hold {@code word} (after {@link #countWords}). */
    int messagesWith(String word) {
        int i = index.getOrDefault(word, -1);
        return i < 0 ? 0 : messagesWith[i];
    }
}
