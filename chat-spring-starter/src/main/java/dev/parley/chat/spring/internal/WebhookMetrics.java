package dev.parley.chat.spring.internal;

import dev.parley.chat.outbox.OutboxEntry;
import dev.parley.chat.outbox.OutboxStore;
import dev.parley.chat.webhooks.WebhookEndpoint;
import dev.parley.chat.webhooks.WebhookListener;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Webhook meters: gauges {@code parley.webhooks.pending} and {@code parley.webhooks.failed} (deliveries waiting,
 * and given up on and still kept), and the counter {@code parley.webhooks.deliveries} tagged
 * {@code outcome=delivered|retried|failed} (attempts' outcomes). Endpoint names are not tags (a tag per URL
 * could grow without bound). Thread-safe.
 */
public final class WebhookMetrics implements WebhookListener {
    private final Counter delivered;
    private final Counter retried;
    private final Counter failed;

    public WebhookMetrics(MeterRegistry registry, Supplier<OutboxStore.@Nullable Counts> counts) {
        Gauge.builder("parley.webhooks.pending", counts, c -> value(c.get(), true))
                .description("Webhook deliveries waiting to be made").strongReference(true).register(registry);
        Gauge.builder("parley.webhooks.failed", counts, c -> value(c.get(), false))
                .description("Webhook deliveries given up on, still kept").strongReference(true).register(registry);
        this.delivered = outcome(registry, "delivered");
        this.retried = outcome(registry, "retried");
        this.failed = outcome(registry, "failed");
    }

    private static Counter outcome(MeterRegistry registry, String outcome) {
        return Counter.builder("parley.webhooks.deliveries").tag("outcome", outcome)
                .description("Webhook delivery attempts by outcome").register(registry);
    }

    private static double value(OutboxStore.@Nullable Counts counts, boolean pending) {
        return counts == null ? 0 : pending ? counts.pending() : counts.failed();
    }

    @Override
    public void delivered(WebhookEndpoint endpoint, OutboxEntry entry, int attempt) {
        delivered.increment();
    }

    @Override
    public void retrying(WebhookEndpoint endpoint, OutboxEntry entry, int attempt, String error, Instant next) {
        retried.increment();
    }

    @Override
    public void failed(@Nullable WebhookEndpoint endpoint, OutboxEntry entry, int attempts, String error) {
        failed.increment();
    }
}
