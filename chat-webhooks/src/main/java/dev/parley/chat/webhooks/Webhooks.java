package dev.parley.chat.webhooks;

import dev.parley.chat.ChatException;
import dev.parley.chat.outbox.OutboxEventType;
import dev.parley.chat.outbox.OutboxRouting;
import dev.parley.chat.outbox.OutboxStore;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import okhttp3.OkHttpClient;
import org.jspecify.annotations.Nullable;

/**
 * The webhook configuration: endpoints, the retry policy and how the dispatcher works. Give {@link #routing()}
 * to the engine ({@code ChatEngine.Builder.outbox}) so that it writes the outbox entries, and start a
 * {@link #dispatcher} on the same store so that they are delivered:
 *
 * <pre>{@code
 * Webhooks webhooks = Webhooks.builder()
 *         .endpoint(WebhookEndpoint.of("ops", "https://ops.example.com/parley", "whsec_…",
 *                 Set.of("run.failed", "input.requested")))
 *         .build();
 * ChatEngine engine = ChatEngine.builder().store(store).runtime(runtime).outbox(webhooks.routing()).build();
 * WebhookDispatcher dispatcher = webhooks.dispatcher(store);
 * dispatcher.start();
 * // … on shutdown: dispatcher.close(); engine.close();
 * }</pre>
 *
 * Immutable and thread-safe. Every builder method throws {@link ChatException} CONFIGURATION for a bad value, and
 * {@link Builder#build()} for a configuration that is wrong as a whole; messages never show a secret.
 */
public final class Webhooks {
    private final Map<String, WebhookEndpoint> endpoints;
    private final Map<OutboxEventType, List<String>> routes;
    private final RetryPolicy retry;
    private final Duration pollInterval;
    private final Duration leaseDuration;
    private final Duration connectTimeout;
    private final Duration callTimeout;
    private final Duration failedRetention;
    private final int batchSize;
    private final int deliveryThreads;
    private final String instanceId;
    private final Clock clock;
    private final WebhookListener listener;
    private final @Nullable OkHttpClient client;

    private Webhooks(Builder b) {
        this.endpoints = Map.copyOf(b.endpoints);
        Map<OutboxEventType, List<String>> byType = new EnumMap<>(OutboxEventType.class);
        for (OutboxEventType type : OutboxEventType.values()) {
            List<String> names = new ArrayList<>();
            b.endpoints.values().stream().filter(e -> e.events().contains(type)).forEach(e -> names.add(e.name()));
            byType.put(type, List.copyOf(names));
        }
        this.routes = byType;
        this.retry = b.retry;
        this.pollInterval = b.pollInterval;
        this.leaseDuration = b.leaseDuration;
        this.connectTimeout = b.connectTimeout;
        this.callTimeout = b.callTimeout;
        this.failedRetention = b.failedRetention;
        this.batchSize = b.batchSize;
        this.deliveryThreads = b.deliveryThreads;
        this.instanceId = b.instanceId;
        this.clock = b.clock;
        this.listener = b.listener;
        this.client = b.client;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Which endpoints want which events: for {@code ChatEngine.Builder.outbox}. Answers from memory. */
    public OutboxRouting routing() {
        return type -> routes.getOrDefault(type, List.of());
    }

    /**
     * A dispatcher delivering {@code store}'s outbox to these endpoints; not started ({@link WebhookDispatcher#start}).
     * Several host instances on one database each start one: a delivery is claimed by one at a time.
     */
    public WebhookDispatcher dispatcher(OutboxStore store) {
        return new WebhookDispatcher(this, Objects.requireNonNull(store, "store"));
    }

    /** The endpoint named {@code name}, or null if none has that name. */
    public @Nullable WebhookEndpoint endpoint(String name) {
        return endpoints.get(name);
    }

    public List<WebhookEndpoint> endpoints() {
        return List.copyOf(endpoints.values());
    }

    public RetryPolicy retry() {
        return retry;
    }

    public Duration pollInterval() {
        return pollInterval;
    }

    public Duration leaseDuration() {
        return leaseDuration;
    }

    public Duration connectTimeout() {
        return connectTimeout;
    }

    public Duration callTimeout() {
        return callTimeout;
    }

    public Duration failedRetention() {
        return failedRetention;
    }

    public int batchSize() {
        return batchSize;
    }

    public int deliveryThreads() {
        return deliveryThreads;
    }

    public String instanceId() {
        return instanceId;
    }

    public Clock clock() {
        return clock;
    }

    public WebhookListener listener() {
        return listener;
    }

    /** The client given to the builder, or null for one of the dispatcher's own. */
    public @Nullable OkHttpClient client() {
        return client;
    }

    /** Configures {@link Webhooks}. Not thread-safe; {@link #build()} once. */
    public static final class Builder {
        private final Map<String, WebhookEndpoint> endpoints = new LinkedHashMap<>();
        private RetryPolicy retry = RetryPolicy.defaults();
        private Duration pollInterval = Duration.ofSeconds(1);
        private Duration leaseDuration = Duration.ofMinutes(2);
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration callTimeout = Duration.ofSeconds(15);
        private Duration failedRetention = Duration.ofDays(7);
        private int batchSize = 16;
        private int deliveryThreads = 4;
        private String instanceId = "webhooks-" + UUID.randomUUID();
        private Clock clock = Clock.systemUTC();
        private WebhookListener listener = new WebhookListener() {
        };
        private @Nullable OkHttpClient client;

        private Builder() {
        }

        /** Adds an endpoint; names are unique. */
        public Builder endpoint(WebhookEndpoint endpoint) {
            Objects.requireNonNull(endpoint, "endpoint");
            if (endpoints.putIfAbsent(endpoint.name(), endpoint) != null) {
                throw ChatException.configuration("two webhook endpoints are named '" + endpoint.name() + "'");
            }
            return this;
        }

        /** When failed deliveries are tried again (default {@link RetryPolicy#defaults()}). */
        public Builder retry(RetryPolicy value) {
            this.retry = Objects.requireNonNull(value, "retry");
            return this;
        }

        /** How often the dispatcher looks for due deliveries (default 1 s). */
        public Builder pollInterval(Duration value) {
            this.pollInterval = positive(value, "pollInterval");
            return this;
        }

        /**
         * How long a claim lasts (default 2 min): another instance delivers a claimed entry again only after
         * this, so a dead instance's deliveries wait this long. Must exceed the time a batch can take
         * ({@link #build()} checks).
         */
        public Builder leaseDuration(Duration value) {
            this.leaseDuration = positive(value, "leaseDuration");
            return this;
        }

        /** OkHttp's connect timeout (default 5 s). */
        public Builder connectTimeout(Duration value) {
            this.connectTimeout = positive(value, "connectTimeout");
            return this;
        }

        /** OkHttp's timeout for a whole delivery, connect to answer (default 15 s). */
        public Builder callTimeout(Duration value) {
            this.callTimeout = positive(value, "callTimeout");
            return this;
        }

        /** How long deliveries given up on are kept (counted as failed) before they are removed (default 7 days). */
        public Builder failedRetention(Duration value) {
            this.failedRetention = positive(value, "failedRetention");
            return this;
        }

        /** How many due deliveries one poll claims at most (default 16). */
        public Builder batchSize(int value) {
            if (value < 1) {
                throw ChatException.configuration("webhooks batchSize must be at least 1, got " + value);
            }
            this.batchSize = value;
            return this;
        }

        /** Threads that make the HTTP calls (default 4). */
        public Builder deliveryThreads(int value) {
            if (value < 1) {
                throw ChatException.configuration("webhooks deliveryThreads must be at least 1, got " + value);
            }
            this.deliveryThreads = value;
            return this;
        }

        /** This instance's name in claims (default a random one); unique per running instance. */
        public Builder instanceId(String value) {
            if (value == null || value.isBlank()) {
                throw ChatException.configuration("webhooks instanceId must not be blank");
            }
            this.instanceId = value;
            return this;
        }

        public Builder clock(Clock value) {
            this.clock = Objects.requireNonNull(value, "clock");
            return this;
        }

        public Builder listener(WebhookListener value) {
            this.listener = Objects.requireNonNull(value, "listener");
            return this;
        }

        /**
         * The OkHttp client to deliver with (default: one of the dispatcher's own, with the timeouts above and no
         * redirects followed). A client given here is used as it is; the dispatcher does not close it.
         */
        public Builder client(OkHttpClient value) {
            this.client = Objects.requireNonNull(value, "client");
            return this;
        }

        /**
         * @throws ChatException CONFIGURATION without an endpoint, or with a lease shorter than a batch can take
         *     (a batch's deliveries, {@code batchSize / deliveryThreads} rounds of {@code callTimeout})
         */
        public Webhooks build() {
            if (endpoints.isEmpty()) {
                throw ChatException.configuration("webhooks need at least one endpoint");
            }
            long rounds = (batchSize + deliveryThreads - 1) / deliveryThreads;
            Duration batch = callTimeout.multipliedBy(rounds);
            if (leaseDuration.compareTo(batch) <= 0) {
                throw ChatException.configuration("the webhooks leaseDuration (" + leaseDuration + ") must exceed the "
                        + "time a batch may take (" + batch + ": " + rounds + " round(s) of callTimeout " + callTimeout
                        + "); raise it or lower callTimeout or batchSize");
            }
            return new Webhooks(this);
        }

        private static Duration positive(Duration value, String name) {
            Objects.requireNonNull(value, name);
            if (value.isNegative() || value.isZero()) {
                throw ChatException.configuration("webhooks " + name + " must be positive, got " + value);
            }
            return value;
        }
    }
}
