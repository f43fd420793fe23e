/**
 * Webhooks for Parley's runs: a host is told, by a signed HTTP POST, when a run ends ({@code run.succeeded},
 * {@code run.failed}, {@code run.cancelled}, {@code run.interrupted}) or waits for a person
 * ({@code input.requested}). Deliveries follow the Standard Webhooks specification (headers
 * {@code webhook-id}, {@code webhook-timestamp}, {@code webhook-signature}) and come from the store's durable
 * outbox ({@link dev.parley.chat.outbox}): at least once, with a stable id, retried with exponential backoff for a
 * bounded time, by one instance of a cluster at a time.
 *
 * <p>Configure {@link dev.parley.chat.webhooks.Webhooks} with its builder, give
 * {@link dev.parley.chat.webhooks.Webhooks#routing()} to the engine and start
 * {@link dev.parley.chat.webhooks.Webhooks#dispatcher} on the same store.
 */
@NullMarked
package dev.parley.chat.webhooks;

import org.jspecify.annotations.NullMarked;
