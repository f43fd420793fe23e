package dev.parley.chat.hermes.internal;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Replaces known secrets (the bearer token, a run's model API key) with {@code ****} in text that leaves
 * the adapter: error messages, events. A defence in depth for a remote side that echoes what it got.
 * Immutable.
 */
public final class Redactor {
    /** Shorter values are not treated as secrets (they would mask ordinary words). */
    private static final int MIN_SECRET_LENGTH = 6;
    private static final String MASK = "****";

    private final List<String> secrets;

    private Redactor(List<String> secrets) {
        this.secrets = secrets;
    }

    public static Redactor of(@Nullable String... secrets) {
        return new Redactor(keep(List.of(), secrets));
    }

    /** This redactor plus more secrets. */
    public Redactor with(@Nullable String... more) {
        return new Redactor(keep(secrets, more));
    }

    private static List<String> keep(Collection<String> base, @Nullable String[] more) {
        List<String> all = new ArrayList<>(base);
        for (String s : more) {
            if (s != null && s.length() >= MIN_SECRET_LENGTH && !all.contains(s)) {
                all.add(s);
            }
        }
        return List.copyOf(all);
    }

    public String redact(String text) {
        String result = text;
        for (String secret : secrets) {
            if (result.contains(secret)) {
                result = result.replace(secret, MASK);
            }
        }
        return result;
    }
}
