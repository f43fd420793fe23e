package dev.parley.chat.webhooks;

import dev.parley.chat.ChatException;
import java.time.Duration;
import java.util.Objects;

/**
 * When a failed delivery is tried again: after {@code initialDelay}, then twice as long each time, at most
 * {@code maxDelay} apart; given up once {@code maxAttempts} attempts failed or the next attempt would come more
 * than {@code maxAge} after the event. Defaults ({@link #defaults()}): 5 s doubling to at most 1 h, for 24 h or
 * 40 attempts — 5 s, 10 s, 20 s … about 1 h after the 11th, then hourly, so about 33 attempts in 24 h.
 * Immutable.
 */
public record RetryPolicy(Duration initialDelay, Duration maxDelay, Duration maxAge, int maxAttempts) {

    /** @throws ChatException CONFIGURATION for a delay or age that is not positive, or fewer than 1 attempt */
    public RetryPolicy {
        positive(initialDelay, "initialDelay");
        positive(maxDelay, "maxDelay");
        positive(maxAge, "maxAge");
        if (maxDelay.compareTo(initialDelay) < 0) {
            throw ChatException.configuration("webhook retry maxDelay (" + maxDelay + ") is below initialDelay ("
                    + initialDelay + ")");
        }
        if (maxAttempts < 1) {
            throw ChatException.configuration("webhook retry maxAttempts must be at least 1, got " + maxAttempts);
        }
    }

    /** 5 s doubling to at most 1 h, for 24 h or 40 attempts. */
    public static RetryPolicy defaults() {
        return new RetryPolicy(Duration.ofSeconds(5), Duration.ofHours(1), Duration.ofHours(24), 40);
    }

    /** The pause after the {@code attemptsMade}-th failed attempt (1 for the first). */
    public Duration delayAfter(int attemptsMade) {
        long delay = initialDelay.toMillis();
        for (int i = 1; i < attemptsMade && delay < maxDelay.toMillis(); i++) {
            delay *= 2;
        }
        return Duration.ofMillis(Math.min(delay, maxDelay.toMillis()));
    }

    private static void positive(Duration value, String name) {
        Objects.requireNonNull(value, name);
        if (value.isNegative() || value.isZero()) {
            throw ChatException.configuration("webhook retry " + name + " must be positive, got " + value);
        }
    }
}
