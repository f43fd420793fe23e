package dev.parley.chat.spring;

import dev.parley.chat.ChatException;
import dev.parley.chat.outbox.OutboxEntry;
import dev.parley.chat.outbox.OutboxRouting;
import dev.parley.chat.outbox.OutboxStore;
import dev.parley.chat.spring.internal.WebhookMetrics;
import dev.parley.chat.spring.internal.WebhooksConfigured;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.webhooks.RetryPolicy;
import dev.parley.chat.webhooks.WebhookDispatcher;
import dev.parley.chat.webhooks.WebhookEndpoint;
import dev.parley.chat.webhooks.WebhookListener;
import dev.parley.chat.webhooks.Webhooks;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Instant;
import java.util.HashSet;
import java.util.List;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * Signed webhooks ({@code parley.webhooks[…]}, {@link ParleyWebhookProperties}) when {@code chat-webhooks} is on
 * the classpath and an endpoint is configured: a {@link Webhooks} bean, its {@link OutboxRouting} (which the
 * engine picks up, so that runs' ends and input requests are written to the store's outbox) and a started
 * {@link WebhookDispatcher} on the {@link ChatStore} bean, closed with the context. A configuration that is
 * wrong — no URL, a non-https URL to a host that is not localhost, a malformed secret, an unknown event, a store
 * that keeps no outbox — fails the start-up with a message naming the property. With a Micrometer
 * {@code MeterRegistry}: gauges {@code parley.webhooks.pending} and {@code parley.webhooks.failed}, counter
 * {@code parley.webhooks.deliveries{outcome}}.
 */
@AutoConfiguration(before = ParleyAutoConfiguration.class, afterName = {
    "dev.parley.chat.spring.ParleyJdbiStoreAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"
})
@ConditionalOnClass(Webhooks.class)
@Conditional(WebhooksConfigured.class)
@EnableConfigurationProperties(ParleyWebhookProperties.class)
public class ParleyWebhooksAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public Webhooks parleyWebhooks(ParleyWebhookProperties properties, ObjectProvider<WebhookListener> listeners) {
        Webhooks.Builder builder = Webhooks.builder();
        List<ParleyWebhookProperties.Endpoint> endpoints = properties.getWebhooks();
        for (int i = 0; i < endpoints.size(); i++) {
            builder.endpoint(endpoint("parley.webhooks[" + i + "]", endpoints.get(i)));
        }
        ParleyWebhookProperties.Delivery delivery = properties.getWebhookDelivery();
        try {
            builder.retry(new RetryPolicy(delivery.getInitialDelay(), delivery.getMaxDelay(), delivery.getMaxAge(),
                    delivery.getMaxAttempts()))
                    .pollInterval(delivery.getPollInterval())
                    .leaseDuration(delivery.getLeaseDuration())
                    .connectTimeout(delivery.getConnectTimeout())
                    .callTimeout(delivery.getCallTimeout())
                    .failedRetention(delivery.getFailedRetention())
                    .batchSize(delivery.getBatchSize())
                    .deliveryThreads(delivery.getThreads());
        } catch (ChatException e) {
            throw ChatException.configuration("parley.webhook-delivery: " + e.getMessage());
        }
        List<WebhookListener> all = listeners.orderedStream().collect(Collectors.toList());
        if (!all.isEmpty()) {
            builder.listener(new Listeners(all));
        }
        return builder.build();
    }

    private static WebhookEndpoint endpoint(String property, ParleyWebhookProperties.Endpoint config) {
        String url = config.getUrl();
        if (url == null || url.isBlank()) {
            throw ChatException.configuration(property + ".url is not set: each webhook needs a url");
        }
        try {
            WebhookEndpoint parsed = WebhookEndpoint.of(config.getName() != null ? config.getName() : "unnamed", url,
                    config.getSecret(), new HashSet<>(config.getEvents()));
            return config.getName() != null ? parsed
                    : new WebhookEndpoint(parsed.safeUrl(), parsed.url(), parsed.secret(), parsed.events());
        } catch (ChatException e) {
            throw ChatException.configuration(property + ": " + e.getMessage());
        }
    }

    @Bean
    @ConditionalOnMissingBean
    public OutboxRouting parleyWebhookRouting(Webhooks webhooks) {
        return webhooks.routing();
    }

    @Bean(initMethod = "start", destroyMethod = "close")
    @ConditionalOnMissingBean
    public WebhookDispatcher parleyWebhookDispatcher(Webhooks webhooks, ChatStore store) {
        if (!(store instanceof OutboxStore outbox)) {
            throw ChatException.configuration("parley.webhooks needs a store that keeps an outbox (chat-store-jdbi or "
                    + "the in-memory store); the ChatStore bean " + store.getClass().getName() + " keeps no outbox");
        }
        return webhooks.dispatcher(outbox);
    }

    /** Meters, when the application has a Micrometer registry. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBean(MeterRegistry.class)
    static class Metrics {
        @Bean
        @ConditionalOnMissingBean
        WebhookMetrics parleyWebhookMetrics(MeterRegistry registry, ObjectProvider<WebhookDispatcher> dispatcher) {
            return new WebhookMetrics(registry, () -> {
                WebhookDispatcher running = dispatcher.getIfAvailable();
                return running == null ? null : running.counts();
            });
        }
    }

    /** Tells every listener bean; one that throws does not keep the others from being told. */
    private record Listeners(List<WebhookListener> all) implements WebhookListener {
        @Override
        public void delivered(WebhookEndpoint endpoint, OutboxEntry entry, int attempt) {
            all.forEach(listener -> listener.delivered(endpoint, entry, attempt));
        }

        @Override
        public void retrying(WebhookEndpoint endpoint, OutboxEntry entry, int attempt, String error, Instant next) {
            all.forEach(listener -> listener.retrying(endpoint, entry, attempt, error, next));
        }

        @Override
        public void failed(@Nullable WebhookEndpoint endpoint, OutboxEntry entry, int attempts, String error) {
            all.forEach(listener -> listener.failed(endpoint, entry, attempts, error));
        }
    }
}
