package dev.parley.chat.webhooks;

import dev.parley.chat.outbox.OutboxEntry;
import java.time.Instant;

/**
 * Told what the dispatcher does with each delivery, for metrics. Called on the dispatcher's delivery threads;
 * must be quick and must not throw (what it throws is logged and ignored). Every method does nothing by default.
 */
public interface WebhookListener {
    /** The endpoint answered 2xx to attempt {@code attempt} (1 for the first). */
    default void delivered(WebhookEndpoint endpoint, OutboxEntry entry, int attempt) {
    }

    /** Attempt {@code attempt} failed ({@code error} says how, without the secret or the URL's query); retried at {@code next}. */
    default void retrying(WebhookEndpoint endpoint, OutboxEntry entry, int attempt, String error, Instant next) {
    }

    /**
     * The delivery was given up after {@code attempts} attempts: the retries' bound was reached, or the endpoint
     * answered 410 Gone. {@code endpoint} is null when no configured endpoint has the entry's destination.
     */
    default void failed(@org.jspecify.annotations.Nullable WebhookEndpoint endpoint, OutboxEntry entry, int attempts,
            String error) {
    }
}
