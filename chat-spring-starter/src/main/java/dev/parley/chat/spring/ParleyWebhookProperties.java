package dev.parley.chat.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Webhooks ({@code parley.webhooks[…]} and {@code parley.webhook-delivery.*}), read when {@code chat-webhooks} is
 * on the classpath and at least one endpoint is configured (see the starter's README, "Webhooks").
 */
@ConfigurationProperties("parley")
public class ParleyWebhookProperties {
    /** The endpoints. */
    private List<Endpoint> webhooks = new ArrayList<>();
    /** How deliveries are made and retried, for every endpoint. */
    private Delivery webhookDelivery = new Delivery();

    public List<Endpoint> getWebhooks() {
        return webhooks;
    }

    public void setWebhooks(List<Endpoint> webhooks) {
        this.webhooks = webhooks;
    }

    public Delivery getWebhookDelivery() {
        return webhookDelivery;
    }

    public void setWebhookDelivery(Delivery webhookDelivery) {
        this.webhookDelivery = webhookDelivery;
    }

    /** One endpoint. */
    public static class Endpoint {
        /**
         * The endpoint's name, stored with its pending deliveries; unset: its URL without the query. Set it to
         * keep pending deliveries when the URL changes.
         */
        private @Nullable String name;
        /** Where to POST: https (http only for localhost). */
        private @Nullable String url;
        /** The signing secret, whsec_ and the Base64 of 16 to 64 bytes (Standard Webhooks). */
        private @Nullable String secret;
        /**
         * The events it wants: run.succeeded, run.failed, run.cancelled, run.interrupted, input.requested; empty
         * for every one.
         */
        private List<String> events = new ArrayList<>();

        public @Nullable String getName() {
            return name;
        }

        public void setName(@Nullable String name) {
            this.name = name;
        }

        public @Nullable String getUrl() {
            return url;
        }

        public void setUrl(@Nullable String url) {
            this.url = url;
        }

        public @Nullable String getSecret() {
            return secret;
        }

        public void setSecret(@Nullable String secret) {
            this.secret = secret;
        }

        public List<String> getEvents() {
            return events;
        }

        public void setEvents(List<String> events) {
            this.events = events;
        }
    }

    /** Delivery and retries. */
    public static class Delivery {
        /** The pause after the first failed attempt; doubled after each further one. */
        private Duration initialDelay = Duration.ofSeconds(5);
        /** The longest pause between two attempts. */
        private Duration maxDelay = Duration.ofHours(1);
        /** No attempt later than this after the event: then the delivery is given up. */
        private Duration maxAge = Duration.ofHours(24);
        /** Attempts at most before the delivery is given up. */
        private int maxAttempts = 40;
        /** How often due deliveries are looked for. */
        private Duration pollInterval = Duration.ofSeconds(1);
        /** How long an instance's claim on a delivery lasts (another instance takes it over after that). */
        private Duration leaseDuration = Duration.ofMinutes(2);
        /** The HTTP connect timeout. */
        private Duration connectTimeout = Duration.ofSeconds(5);
        /** The timeout of a whole delivery. */
        private Duration callTimeout = Duration.ofSeconds(15);
        /** How long deliveries given up on are kept (and counted as failed). */
        private Duration failedRetention = Duration.ofDays(7);
        /** Deliveries claimed per poll at most. */
        private int batchSize = 16;
        /** Threads making the HTTP calls. */
        private int threads = 4;

        public Duration getInitialDelay() {
            return initialDelay;
        }

        public void setInitialDelay(Duration initialDelay) {
            this.initialDelay = initialDelay;
        }

        public Duration getMaxDelay() {
            return maxDelay;
        }

        public void setMaxDelay(Duration maxDelay) {
            this.maxDelay = maxDelay;
        }

        public Duration getMaxAge() {
            return maxAge;
        }

        public void setMaxAge(Duration maxAge) {
            this.maxAge = maxAge;
        }

        public int getMaxAttempts() {
            return maxAttempts;
        }

        public void setMaxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
        }

        public Duration getPollInterval() {
            return pollInterval;
        }

        public void setPollInterval(Duration pollInterval) {
            this.pollInterval = pollInterval;
        }

        public Duration getLeaseDuration() {
            return leaseDuration;
        }

        public void setLeaseDuration(Duration leaseDuration) {
            this.leaseDuration = leaseDuration;
        }

        public Duration getConnectTimeout() {
            return connectTimeout;
        }

        public void setConnectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
        }

        public Duration getCallTimeout() {
            return callTimeout;
        }

        public void setCallTimeout(Duration callTimeout) {
            this.callTimeout = callTimeout;
        }

        public Duration getFailedRetention() {
            return failedRetention;
        }

        public void setFailedRetention(Duration failedRetention) {
            this.failedRetention = failedRetention;
        }

        public int getBatchSize() {
            return batchSize;
        }

        public void setBatchSize(int batchSize) {
            this.batchSize = batchSize;
        }

        public int getThreads() {
            return threads;
        }

        public void setThreads(int threads) {
            this.threads = threads;
        }
    }
}
