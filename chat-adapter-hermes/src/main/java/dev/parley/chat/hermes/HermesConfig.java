package dev.parley.chat.hermes;

import dev.parley.chat.ChatException;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.SkillResolver;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.function.UnaryOperator;
import okhttp3.HttpUrl;
import okhttp3.OkHttpClient;
import org.jspecify.annotations.Nullable;

/**
 * How {@link HermesRuntimeAdapter} reaches Hermes. Immutable and thread-safe; build one with
 * {@link #builder()}. {@link #toString()} never shows the bearer token. A value the builder cannot use (a
 * timeout that is not positive, a URL that is not http(s), no URL at all) throws {@link ChatException} with
 * {@code CONFIGURATION}.
 *
 * <h2>Timeouts</h2>
 * <ul>
 *   <li>{@code connectTimeout} (default 5 s): establishing a connection.</li>
 *   <li>{@code idleTimeout} (default 60 s): the longest an event stream may stay silent. The Bridge
 *       sends a {@code : ping} heartbeat every 15 s (Hermes' API server every 10 to 30 s), so a healthy
 *       stream is never silent that long, however long a tool runs or a clarify waits; a silent stream
 *       is a stall. Keep it at least twice the heartbeat interval.</li>
 *   <li>{@code requestTimeout} (default 30 s): a whole non-streaming call (clarify answer, cancel,
 *       health, run status).</li>
 * </ul>
 *
 * <h2>Re-attaching</h2>
 * When a Bridge stream breaks before its {@code done} frame, the adapter re-attaches up to
 * {@code reattachAttempts} times in a row (default 3), waiting {@code reattachBackoff} (default 500 ms),
 * doubled after each failed attempt; an attempt that brings new frames resets the count. On the API
 * server transport the same settings bound polling the run's status after a lost stream.
 *
 * <h2>Hermes' API server</h2>
 * On the API server transport the adapter reads {@code GET /health} and {@code GET /v1/capabilities} once,
 * keeps what they say for {@code apiServerInfoTtl} (default 10 min) or until a call to the server fails,
 * and decides from it how to keep a thread's memory, whether a start may be retried and whether clarify
 * questions exist. Each of these can be pinned ({@link FeatureSetting}):
 * <ul>
 *   <li>{@code apiServerSessionHistory}: ON means the server restores a session's earlier turns from
 *       {@code session_id} (Hermes 0.20 and later), so only the session is sent; OFF means it does not
 *       (0.19), so the thread's earlier turns are sent as {@code conversation_history} on every run.</li>
 *   <li>{@code apiServerIdempotentStart}: whether the server honours {@code Idempotency-Key} on
 *       {@code POST /v1/runs} (0.20 and later), which makes a retried start safe.</li>
 *   <li>{@code apiServerClarify}: whether the server has clarify questions ({@code /v1/runs/{id}/clarify}).</li>
 * </ul>
 * {@code apiServerApprovalTimeout} (default 60 s, Hermes' {@code approvals.timeout} default) is how long
 * the server waits for an approval decision; set it to the server's value. Zero means the server waits
 * without limit.
 *
 * <h2>Files on a Bridge</h2>
 * {@code bridgeAttachments} is what the adapter declares on the Bridge transport
 * ({@code HermesRuntimeAdapter.attachmentSupport()}); the engine reads it once when it is built and refuses other
 * uploads before storing them. The default, {@link #BRIDGE_ATTACHMENTS}, is what the reference Bridge takes: any
 * file. Each run with files then checks the Bridge's {@code GET /health}: a Bridge that does not take attachments,
 * or not this type, this many or this large, fails the run before it is sent, saying so; set
 * {@link AttachmentSupport#NONE} for such a Bridge so that files are refused at upload instead, or the types an
 * operator restricted the Bridge to.
 */
public final class HermesConfig {
    /** What the reference Bridge takes ({@code --attachment-types} default {@code *}{@code /*}): any file. */
    public static final AttachmentSupport BRIDGE_ATTACHMENTS = new AttachmentSupport(Set.of("*/*"),
            "the Hermes Bridge takes any file");

    private final HermesTransport transport;
    private final HttpUrl baseUrl;
    private final @Nullable String bearerToken;
    private final Duration connectTimeout;
    private final Duration idleTimeout;
    private final Duration requestTimeout;
    private final int defaultMaxIterations;
    private final ModelResolver modelResolver;
    private final SkillResolver skillResolver;
    private final @Nullable OkHttpClient httpClient;
    private final UnaryOperator<Runnable> taskDecorator;
    private final int reattachAttempts;
    private final Duration reattachBackoff;
    private final FeatureSetting apiServerSessionHistory;
    private final FeatureSetting apiServerIdempotentStart;
    private final FeatureSetting apiServerClarify;
    private final Duration apiServerApprovalTimeout;
    private final Duration apiServerInfoTtl;
    private final AttachmentSupport bridgeAttachments;

    private HermesConfig(Builder b) {
        this.transport = b.transport;
        if (b.baseUrl == null) {
            throw ChatException.configuration("a base URL is required");
        }
        this.baseUrl = b.baseUrl;
        this.bearerToken = b.bearerToken;
        this.connectTimeout = b.connectTimeout;
        this.idleTimeout = b.idleTimeout;
        this.requestTimeout = b.requestTimeout;
        this.defaultMaxIterations = b.defaultMaxIterations;
        this.modelResolver = b.modelResolver;
        this.skillResolver = b.skillResolver;
        this.httpClient = b.httpClient;
        this.taskDecorator = b.taskDecorator;
        this.reattachAttempts = b.reattachAttempts;
        this.reattachBackoff = b.reattachBackoff;
        this.apiServerSessionHistory = b.apiServerSessionHistory;
        this.apiServerIdempotentStart = b.apiServerIdempotentStart;
        this.apiServerClarify = b.apiServerClarify;
        this.apiServerApprovalTimeout = b.apiServerApprovalTimeout;
        this.apiServerInfoTtl = b.apiServerInfoTtl;
        this.bridgeAttachments = b.bridgeAttachments;
    }

    public static Builder builder() {
        return new Builder();
    }

    public HermesTransport transport() {
        return transport;
    }

    /** The base URL; paths such as {@code /run} or {@code /v1/runs} are resolved against it. */
    public HttpUrl baseUrl() {
        return baseUrl;
    }

    /** The bearer token sent on every call, or null. A secret: never log it. */
    public @Nullable String bearerToken() {
        return bearerToken;
    }

    public Duration connectTimeout() {
        return connectTimeout;
    }

    public Duration idleTimeout() {
        return idleTimeout;
    }

    public Duration requestTimeout() {
        return requestTimeout;
    }

    /** The iteration budget of a run that does not name one. */
    public int defaultMaxIterations() {
        return defaultMaxIterations;
    }

    public ModelResolver modelResolver() {
        return modelResolver;
    }

    public SkillResolver skillResolver() {
        return skillResolver;
    }

    /** The host's own client, or null for one the adapter builds (and closes). */
    public @Nullable OkHttpClient httpClient() {
        return httpClient;
    }

    /** What wraps each run's stream task before it goes to the adapter's thread; identity by default. */
    public UnaryOperator<Runnable> taskDecorator() {
        return taskDecorator;
    }

    public int reattachAttempts() {
        return reattachAttempts;
    }

    public Duration reattachBackoff() {
        return reattachBackoff;
    }

    /** API server: whether {@code session_id} restores a thread's earlier turns; see the class comment. */
    public FeatureSetting apiServerSessionHistory() {
        return apiServerSessionHistory;
    }

    /** API server: whether {@code Idempotency-Key} on {@code POST /v1/runs} is honoured. */
    public FeatureSetting apiServerIdempotentStart() {
        return apiServerIdempotentStart;
    }

    /** API server: whether clarify questions exist. */
    public FeatureSetting apiServerClarify() {
        return apiServerClarify;
    }

    /** API server: how long it waits for an approval decision; zero for without limit. */
    public Duration apiServerApprovalTimeout() {
        return apiServerApprovalTimeout;
    }

    /** API server: how long what it said about itself is trusted before it is read again. */
    public Duration apiServerInfoTtl() {
        return apiServerInfoTtl;
    }

    /** Bridge: the files the adapter declares it passes on; see the class comment. */
    public AttachmentSupport bridgeAttachments() {
        return bridgeAttachments;
    }

    @Override
    public String toString() {
        return "HermesConfig[transport=" + transport + ", baseUrl=" + redactedUrl(baseUrl) + ", bearerToken="
                + (bearerToken == null ? "none" : "****") + ", connectTimeout=" + connectTimeout + ", idleTimeout="
                + idleTimeout + ", requestTimeout=" + requestTimeout + ", defaultMaxIterations=" + defaultMaxIterations
                + ", models=" + modelResolver + ", skills=" + skillResolver + ", customHttpClient="
                + (httpClient != null) + ", reattachAttempts=" + reattachAttempts + ", reattachBackoff="
                + reattachBackoff + ", apiServerSessionHistory=" + apiServerSessionHistory
                + ", apiServerIdempotentStart=" + apiServerIdempotentStart + ", apiServerClarify=" + apiServerClarify
                + ", apiServerApprovalTimeout=" + apiServerApprovalTimeout + ", apiServerInfoTtl=" + apiServerInfoTtl
                + ", bridgeAttachments=" + bridgeAttachments.mediaTypes() + "]";
    }

    /** The URL without user info or query (either may hold credentials). */
    static String redactedUrl(HttpUrl url) {
        return url.newBuilder().username("").password("").query(null).build().toString();
    }

    /** Builds a {@link HermesConfig}. Not thread-safe. */
    public static final class Builder {
        private HermesTransport transport = HermesTransport.BRIDGE;
        private @Nullable HttpUrl baseUrl;
        private @Nullable String bearerToken;
        private Duration connectTimeout = Duration.ofSeconds(5);
        private Duration idleTimeout = Duration.ofSeconds(60);
        private Duration requestTimeout = Duration.ofSeconds(30);
        private int defaultMaxIterations = 90;
        private ModelResolver modelResolver = ModelResolver.passThrough();
        private SkillResolver skillResolver = SkillResolver.none();
        private @Nullable OkHttpClient httpClient;
        private UnaryOperator<Runnable> taskDecorator = UnaryOperator.identity();
        private int reattachAttempts = 3;
        private Duration reattachBackoff = Duration.ofMillis(500);
        private FeatureSetting apiServerSessionHistory = FeatureSetting.DETECT;
        private FeatureSetting apiServerIdempotentStart = FeatureSetting.DETECT;
        private FeatureSetting apiServerClarify = FeatureSetting.DETECT;
        private Duration apiServerApprovalTimeout = Duration.ofSeconds(60);
        private Duration apiServerInfoTtl = Duration.ofMinutes(10);
        private AttachmentSupport bridgeAttachments = BRIDGE_ATTACHMENTS;

        private Builder() {
        }

        /** BRIDGE (the default) or API_SERVER. */
        public Builder transport(HermesTransport value) {
            this.transport = Objects.requireNonNull(value, "transport");
            return this;
        }

        /**
         * Where the Bridge or the API server listens, e.g. {@code http://127.0.0.1:8700}. Required.
         *
         * @throws ChatException CONFIGURATION if it is not an http(s) URL
         */
        public Builder baseUrl(String value) {
            HttpUrl parsed = HttpUrl.parse(Objects.requireNonNull(value, "baseUrl"));
            if (parsed == null) {
                throw ChatException.configuration(
                        "baseUrl is not an http(s) URL (the value is not repeated here, it may hold credentials)");
            }
            this.baseUrl = parsed;
            return this;
        }

        /** The bearer token for every call; null or blank for none. */
        public Builder bearerToken(@Nullable String value) {
            this.bearerToken = value == null || value.isBlank() ? null : value;
            return this;
        }

        public Builder connectTimeout(Duration value) {
            this.connectTimeout = positive(value, "connectTimeout");
            return this;
        }

        /** See the class comment; must be positive. */
        public Builder idleTimeout(Duration value) {
            this.idleTimeout = positive(value, "idleTimeout");
            return this;
        }

        public Builder requestTimeout(Duration value) {
            this.requestTimeout = positive(value, "requestTimeout");
            return this;
        }

        /** The iteration budget of runs that do not name one (default 90, Hermes' own default). */
        public Builder defaultMaxIterations(int value) {
            if (value < 1) {
                throw ChatException.configuration("defaultMaxIterations must be at least 1, got " + value);
            }
            this.defaultMaxIterations = value;
            return this;
        }

        public Builder modelResolver(ModelResolver value) {
            this.modelResolver = Objects.requireNonNull(value, "modelResolver");
            return this;
        }

        public Builder skillResolver(SkillResolver value) {
            this.skillResolver = Objects.requireNonNull(value, "skillResolver");
            return this;
        }

        /**
         * Uses the host's client (its pool, proxy, TLS and interceptors). The adapter derives its own
         * timeouts from it and leaves it open on close.
         */
        public Builder httpClient(@Nullable OkHttpClient value) {
            this.httpClient = value;
            return this;
        }

        /**
         * Wraps each run's stream task on the thread that starts the stream (the engine's, where the run's context
         * is current) before the adapter hands it to its own thread, which makes its HTTP calls: to carry a trace
         * there, say (Parley's chat-observation module gives one). Must return a task that runs the given one.
         */
        public Builder taskDecorator(UnaryOperator<Runnable> value) {
            this.taskDecorator = Objects.requireNonNull(value, "taskDecorator");
            return this;
        }

        /** Consecutive failed re-attach attempts before a broken stream fails the run; 0 disables. */
        public Builder reattachAttempts(int value) {
            if (value < 0) {
                throw ChatException.configuration("reattachAttempts must not be negative, got " + value);
            }
            this.reattachAttempts = value;
            return this;
        }

        public Builder reattachBackoff(Duration value) {
            this.reattachBackoff = positive(value, "reattachBackoff");
            return this;
        }

        /** See the class comment; DETECT by default. */
        public Builder apiServerSessionHistory(FeatureSetting value) {
            this.apiServerSessionHistory = Objects.requireNonNull(value, "apiServerSessionHistory");
            return this;
        }

        /** See the class comment; DETECT by default. */
        public Builder apiServerIdempotentStart(FeatureSetting value) {
            this.apiServerIdempotentStart = Objects.requireNonNull(value, "apiServerIdempotentStart");
            return this;
        }

        /** See the class comment; DETECT by default. */
        public Builder apiServerClarify(FeatureSetting value) {
            this.apiServerClarify = Objects.requireNonNull(value, "apiServerClarify");
            return this;
        }

        /** The server's {@code approvals.timeout} (default 60 s); zero if it waits without limit. */
        public Builder apiServerApprovalTimeout(Duration value) {
            Objects.requireNonNull(value, "apiServerApprovalTimeout");
            if (value.isNegative()) {
                throw ChatException.configuration("apiServerApprovalTimeout must not be negative, got " + value);
            }
            this.apiServerApprovalTimeout = value;
            return this;
        }

        /** How long what the server said about itself is kept (default 10 min); must be positive. */
        public Builder apiServerInfoTtl(Duration value) {
            this.apiServerInfoTtl = positive(value, "apiServerInfoTtl");
            return this;
        }

        /**
         * Bridge: the files the adapter declares it passes on (default {@link #BRIDGE_ATTACHMENTS}, any file);
         * {@link AttachmentSupport#NONE} for a Bridge without the attachments addition. See the class comment.
         */
        public Builder bridgeAttachments(AttachmentSupport value) {
            this.bridgeAttachments = Objects.requireNonNull(value, "bridgeAttachments");
            return this;
        }

        public HermesConfig build() {
            return new HermesConfig(this);
        }

        private static Duration positive(Duration value, String name) {
            Objects.requireNonNull(value, name);
            if (value.isNegative() || value.isZero()) {
                throw ChatException.configuration(name + " must be positive, got " + value);
            }
            return value;
        }

        @Override
        public String toString() {
            return "HermesConfig.Builder[transport=" + transport + ", baseUrl="
                    + (baseUrl == null ? "unset" : redactedUrl(baseUrl)) + ", bearerToken="
                    + (bearerToken == null ? "none" : "****") + "]";
        }
    }
}
