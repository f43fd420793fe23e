package dev.parley.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The suite's setting and its figures. {@code -Dparley.chaos=long} selects the release check (the full
 * counts), anything else the short CI setting. {@code -Dparley.chaos.seed=N} replays a seed; without
 * it each test uses its fixed seed in the CI setting and a fresh one in the long setting. Every test ends
 * with one line {@code CHAOS test=… setting=… seed=… key=value …} on its output and in
 * {@code chaos/target/chaos-figures.txt}.
 */
final class Chaos {
    /** Whether this JVM wrote the figures file yet: the first line of a run replaces the last run's file. */
    private static boolean figuresStarted;

    private Chaos() {
    }

    static boolean isLong() {
        return "long".equalsIgnoreCase(System.getProperty("parley.chaos", "ci").strip());
    }

    static String setting() {
        return isLong() ? "long" : "ci";
    }

    /** The CI value or the long one, by setting. */
    static int size(int ci, int releaseCheck) {
        return isLong() ? releaseCheck : ci;
    }

    /** The seed to use: the one asked for, else {@code ciSeed} (CI) or a fresh one (long). */
    static long seed(long ciSeed) {
        String asked = System.getProperty("parley.chaos.seed", "").strip();
        if (!asked.isEmpty()) {
            return Long.parseLong(asked);
        }
        return isLong() ? System.nanoTime() : ciSeed;
    }

    /** Collects one test's figures, in the order they are put. */
    static final class Figures {
        private final Map<String, Object> values = new LinkedHashMap<>();

        Figures(String test, long seed) {
            values.put("test", test);
            values.put("setting", setting());
            values.put("seed", seed);
        }

        Figures put(String key, Object value) {
            values.put(key, value);
            return this;
        }

        /** Prints the line and appends it to the figures file. */
        void report() {
            StringBuilder line = new StringBuilder("CHAOS");
            values.forEach((key, value) -> line.append(' ').append(key).append('=').append(value));
            String text = line.toString();
            System.out.println(text);
            String file = System.getProperty("parley.chaos.figures");
            if (file == null || file.isBlank()) {
                return;
            }
            synchronized (Chaos.class) {
                try {
                    Path path = Paths.get(file);
                    Files.createDirectories(path.toAbsolutePath().getParent());
                    Files.writeString(path, text + System.lineSeparator(), StandardCharsets.UTF_8,
                            StandardOpenOption.CREATE, figuresStarted ? StandardOpenOption.APPEND
                                    : StandardOpenOption.TRUNCATE_EXISTING);
                    figuresStarted = true;
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
        }
    }

    /** The q-quantile (0..1) of sorted values, 0 when empty. */
    static long quantile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return 0;
        }
        int index = (int) Math.ceil(q * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }
}
