package dev.parley.chat.spring;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.DoubleTexting;
import dev.parley.chat.engine.EngineLimits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/** Everything Parley's auto-configuration reads, under {@code parley.*}. */
@ConfigurationProperties("parley")
public class ParleyProperties {

    private final Web web = new Web();
    private final Owner owner = new Owner();
    private final Engine engine = new Engine();
    private final Store store = new Store();
    private final Hermes hermes = new Hermes();
    private final Cluster cluster = new Cluster();

    public Web getWeb() {
        return web;
    }

    public Owner getOwner() {
        return owner;
    }

    public Engine getEngine() {
        return engine;
    }

    public Store getStore() {
        return store;
    }

    public Hermes getHermes() {
        return hermes;
    }

    public Cluster getCluster() {
        return cluster;
    }

    /** Several instances of the application on one PostgreSQL database. */
    public static class Cluster {
        /**
         * Whether this instance shares its PostgreSQL database with other instances: runs are leased and
         * taken over when their instance dies, and progress and control travel by LISTEN/NOTIFY.
         */
        private boolean enabled;
        /** This instance's id among the instances; random when unset. */
        private @Nullable String instanceId;
        /** How long a run's lease lasts without renewal; a dead instance's runs are taken over after it. */
        private Duration leaseTimeout = Duration.ofSeconds(30);
        /** How long a clarify answer taken here waits for the instance holding the run to confirm it. */
        private Duration controlTimeout = Duration.ofSeconds(10);

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public @Nullable String getInstanceId() {
            return instanceId;
        }

        public void setInstanceId(@Nullable String instanceId) {
            this.instanceId = instanceId;
        }

        public Duration getLeaseTimeout() {
            return leaseTimeout;
        }

        public void setLeaseTimeout(Duration leaseTimeout) {
            this.leaseTimeout = leaseTimeout;
        }

        public Duration getControlTimeout() {
            return controlTimeout;
        }

        public void setControlTimeout(Duration controlTimeout) {
            this.controlTimeout = controlTimeout;
        }
    }

    /** The REST + SSE endpoints. */
    public static class Web {
        /** Whether to expose the REST + SSE endpoints. */
        private boolean enabled = true;
        /** The path the endpoints live under. */
        private String basePath = "/api/chat";
        /** How often an idle SSE stream gets a heartbeat comment. */
        private Duration heartbeat = Duration.ofSeconds(15);
        /** The largest request body the endpoints read, in bytes. */
        private int maxRequestBytes = 1_048_576;
        /**
         * The most event text one SSE stream holds for a client that reads slower than its run writes. From
         * half of it the stream asks the engine for no more events; an event that would take it past the
         * whole while it holds half (only large events can) cuts the stream, and the client reconnects.
         */
        private DataSize streamBufferSize = DataSize.ofKilobytes(256);
        /**
         * How long an SSE client may take none of the data waiting for it before its stream is cut (the
         * response completes and the client reconnects with its cursor). No thread waits meanwhile.
         */
        private Duration streamWriteTimeout = Duration.ofSeconds(30);
        /**
         * Origins besides the application's own (e.g. {@code https://app.example.com}) whose pages may call the
         * endpoints that change something; a POST, PATCH or DELETE a browser sends from any other origin is
         * {@code 403}. Requests without an {@code Origin} header (non-browser clients) are not affected. This
         * adds no CORS headers: a page on another origin also needs the host's CORS configuration.
         */
        private List<String> allowedOrigins = new ArrayList<>();
        /**
         * Whether the {@code context} a client sends (the REST field, AG-UI's {@code context[]} and its system
         * and developer messages) reaches the runtime, labelled as sent by the client; off, it is dropped.
         */
        private boolean acceptClientContext = true;
        /** The AG-UI endpoint (docs/ag-ui.md). */
        private final AgUi agui = new AgUi();

        public List<String> getAllowedOrigins() {
            return allowedOrigins;
        }

        public void setAllowedOrigins(List<String> allowedOrigins) {
            this.allowedOrigins = allowedOrigins;
        }

        public boolean isAcceptClientContext() {
            return acceptClientContext;
        }

        public void setAcceptClientContext(boolean acceptClientContext) {
            this.acceptClientContext = acceptClientContext;
        }

        public AgUi getAgui() {
            return agui;
        }

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getBasePath() {
            return basePath;
        }

        public void setBasePath(String basePath) {
            this.basePath = basePath;
        }

        public Duration getHeartbeat() {
            return heartbeat;
        }

        public void setHeartbeat(Duration heartbeat) {
            this.heartbeat = heartbeat;
        }

        public int getMaxRequestBytes() {
            return maxRequestBytes;
        }

        public void setMaxRequestBytes(int maxRequestBytes) {
            this.maxRequestBytes = maxRequestBytes;
        }

        public DataSize getStreamBufferSize() {
            return streamBufferSize;
        }

        public void setStreamBufferSize(DataSize streamBufferSize) {
            this.streamBufferSize = streamBufferSize;
        }

        public Duration getStreamWriteTimeout() {
            return streamWriteTimeout;
        }

        public void setStreamWriteTimeout(Duration streamWriteTimeout) {
            this.streamWriteTimeout = streamWriteTimeout;
        }
    }

    /** The AG-UI endpoint: CopilotKit and other AG-UI clients run Parley threads through it. */
    public static class AgUi {
        /** Whether to expose the AG-UI endpoint (with the other endpoints, see {@code parley.web.enabled}). */
        private boolean enabled = true;
        /** Its path under {@code parley.web.base-path}. */
        private String path = "/agui";

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public String getPath() {
            return path;
        }

        public void setPath(String path) {
            this.path = path;
        }
    }

    /** How the caller (the owner of threads) is found for each request. */
    public static class Owner {
        /**
         * AUTO: Spring Security's principal when Spring Security is present, else the fixed owner when
         * one is set, else the application refuses to start (the header is trusted only when HEADER is
         * chosen explicitly). SECURITY, HEADER and FIXED force one.
         */
        private OwnerMode mode = OwnerMode.AUTO;
        /** The request header naming the owner in HEADER mode. Unsafe unless a trusted proxy sets it. */
        private String header = "X-Parley-Owner";
        /** The one owner of every request in FIXED mode: for demos only, never in production. */
        private @Nullable String fixed;

        public OwnerMode getMode() {
            return mode;
        }

        public void setMode(OwnerMode mode) {
            this.mode = mode;
        }

        public String getHeader() {
            return header;
        }

        public void setHeader(String header) {
            this.header = header;
        }

        public @Nullable String getFixed() {
            return fixed;
        }

        public void setFixed(@Nullable String fixed) {
            this.fixed = fixed;
        }
    }

    /** How an owner is resolved. */
    public enum OwnerMode {
        AUTO,
        SECURITY,
        HEADER,
        FIXED
    }

    /** The engine's limits and tuning; the defaults are those of {@link EngineLimits#defaults()}. */
    public static class Engine {
        /** What a message to a busy thread does: REJECT (409), ENQUEUE or INTERRUPT. */
        private DoubleTexting doubleTexting = DoubleTexting.REJECT;
        /** The longest user message or clarify answer, in characters. */
        private int maxMessageLength = 100_000;
        /** The page a list or thread view returns when the caller names no size. */
        private int defaultPageSize = EngineLimits.defaults().defaultPageSize();
        /**
         * The largest page a caller may ask for, and the most messages one read of the store takes for a
         * request (an AG-UI request reads the newest this many messages of the thread's branch).
         */
        private int maxPageSize = EngineLimits.defaults().maxPageSize();
        /**
         * The most steps (thinking, tool calls and results, todos, inputs, statuses) of one answer a thread view
         * shows, newest kept; the view's {@code omittedSteps} says how many it leaves out. Also the most a
         * run's history and a compacted run's replay hold of an answer; an export holds every step.
         */
        private int maxStepsPerAnswer = EngineLimits.defaults().maxStepsPerAnswer();
        /** How many events a live subscriber may fall behind before it is cut off (it reconnects). */
        private int subscriberLagLimit = 10_000;
        /** How often new events are stored. */
        private Duration eventFlushInterval = Duration.ofMillis(20);
        /** A flush starts early once this many events wait. */
        private int eventFlushBatchSize = 512;
        /** The most events one store transaction holds (a store that fell behind catches up in such steps). */
        private int maxBatchEvents = EngineLimits.defaults().maxBatchEvents();
        /** The most bytes one store transaction holds, estimated from the events' and messages' text. */
        private DataSize maxBatchBytes = DataSize.ofBytes(EngineLimits.defaults().maxBatchBytes());
        /** How often a running run's messages are stored (events are stored every flush). */
        private Duration messageFlushInterval = Duration.ofSeconds(1);
        /** How long a runtime may take to confirm a cancel before the engine ends the run itself. */
        private Duration cancelGracePeriod = Duration.ofSeconds(10);
        /**
         * How long a tool the person's browser runs may take before its call fails as timed out (the page
         * runs it as soon as it sees the call; this is mostly the time a person may be away).
         */
        private Duration clientToolTimeout = EngineLimits.defaults().clientToolTimeout();
        /** Threads that deliver events to subscribers (SSE streams format events on them, never wait on a client). */
        private int deliveryThreads = ChatEngine.Builder.DEFAULT_DELIVERY_THREADS;
        /**
         * Compact the event logs of runs that ended longer ago than this (checked hourly), keeping their
         * messages; unset (the default), event logs are kept for good.
         */
        private @Nullable Duration eventRetention;

        public @Nullable Duration getEventRetention() {
            return eventRetention;
        }

        public void setEventRetention(@Nullable Duration eventRetention) {
            this.eventRetention = eventRetention;
        }

        public DoubleTexting getDoubleTexting() {
            return doubleTexting;
        }

        public void setDoubleTexting(DoubleTexting doubleTexting) {
            this.doubleTexting = doubleTexting;
        }

        public int getMaxMessageLength() {
            return maxMessageLength;
        }

        public void setMaxMessageLength(int maxMessageLength) {
            this.maxMessageLength = maxMessageLength;
        }

        public int getDefaultPageSize() {
            return defaultPageSize;
        }

        public void setDefaultPageSize(int defaultPageSize) {
            this.defaultPageSize = defaultPageSize;
        }

        public int getMaxPageSize() {
            return maxPageSize;
        }

        public void setMaxPageSize(int maxPageSize) {
            this.maxPageSize = maxPageSize;
        }

        public int getMaxStepsPerAnswer() {
            return maxStepsPerAnswer;
        }

        public void setMaxStepsPerAnswer(int maxStepsPerAnswer) {
            this.maxStepsPerAnswer = maxStepsPerAnswer;
        }

        public int getSubscriberLagLimit() {
            return subscriberLagLimit;
        }

        public void setSubscriberLagLimit(int subscriberLagLimit) {
            this.subscriberLagLimit = subscriberLagLimit;
        }

        public Duration getEventFlushInterval() {
            return eventFlushInterval;
        }

        public void setEventFlushInterval(Duration eventFlushInterval) {
            this.eventFlushInterval = eventFlushInterval;
        }

        public int getEventFlushBatchSize() {
            return eventFlushBatchSize;
        }

        public void setEventFlushBatchSize(int eventFlushBatchSize) {
            this.eventFlushBatchSize = eventFlushBatchSize;
        }

        public int getMaxBatchEvents() {
            return maxBatchEvents;
        }

        public void setMaxBatchEvents(int maxBatchEvents) {
            this.maxBatchEvents = maxBatchEvents;
        }

        public DataSize getMaxBatchBytes() {
            return maxBatchBytes;
        }

        public void setMaxBatchBytes(DataSize maxBatchBytes) {
            this.maxBatchBytes = maxBatchBytes;
        }

        public Duration getMessageFlushInterval() {
            return messageFlushInterval;
        }

        public void setMessageFlushInterval(Duration messageFlushInterval) {
            this.messageFlushInterval = messageFlushInterval;
        }

        public Duration getCancelGracePeriod() {
            return cancelGracePeriod;
        }

        public void setCancelGracePeriod(Duration cancelGracePeriod) {
            this.cancelGracePeriod = cancelGracePeriod;
        }

        public Duration getClientToolTimeout() {
            return clientToolTimeout;
        }

        public void setClientToolTimeout(Duration clientToolTimeout) {
            this.clientToolTimeout = clientToolTimeout;
        }

        public int getDeliveryThreads() {
            return deliveryThreads;
        }

        public void setDeliveryThreads(int deliveryThreads) {
            this.deliveryThreads = deliveryThreads;
        }

        /** These settings as engine limits. */
        public EngineLimits toLimits() {
            EngineLimits defaults = EngineLimits.defaults();
            return new EngineLimits(maxMessageLength, maxPageSize, defaultPageSize,
                    defaults.titleLength(), subscriberLagLimit, eventFlushInterval, eventFlushBatchSize,
                    maxBatchEvents, Math.toIntExact(maxBatchBytes.toBytes()), messageFlushInterval,
                    defaults.maxPendingEvents(), cancelGracePeriod, defaults.replayPageSize(), clientToolTimeout,
                    defaults.historyMessages(), defaults.historyCharacters(), maxStepsPerAnswer);
        }
    }

    /** The store. */
    public static class Store {
        /** Whether the JDBI store runs its Flyway migrations at start-up (else the host runs them). */
        private boolean migrate = true;

        public boolean isMigrate() {
            return migrate;
        }

        public void setMigrate(boolean migrate) {
            this.migrate = migrate;
        }
    }

    /** The Hermes runtime, used when {@code parley.hermes.base-url} is set. */
    public static class Hermes {
        /** The Bridge's or the API server's base URL, e.g. http://localhost:8642. */
        private @Nullable String baseUrl;
        /** BRIDGE (the Hermes Bridge protocol) or API_SERVER (Hermes Agent's own /v1/runs API). */
        private String transport = "BRIDGE";
        /** The bearer token the runtime expects, if any. Never logged. */
        private @Nullable String token;
        /** How long connecting may take. */
        private Duration connectTimeout = Duration.ofSeconds(10);
        /** How long a stream may stay silent (heartbeats included) before it counts as stalled. */
        private Duration idleTimeout = Duration.ofSeconds(60);
        /** The iteration budget of a run when the request names none. */
        private int maxIterations = 100;
        /** A folder of skill folders, each with a SKILL.md used as the system prompt. */
        private @Nullable Path skillsDir;
        /** The models a person may choose; API keys are sent to the runtime, never shown or stored. */
        private List<Model> models = new ArrayList<>();
        /** Behaviours of Hermes' API server, read from the server unless pinned here. */
        private ApiServer apiServer = new ApiServer();
        /** Bridge only: the media types of the files the adapter passes on ({@code image/*} allowed); empty for none. */
        private List<String> bridgeAttachmentTypes = new ArrayList<>(List.of("*/*"));

        public @Nullable String getBaseUrl() {
            return baseUrl;
        }

        public void setBaseUrl(@Nullable String baseUrl) {
            this.baseUrl = baseUrl;
        }

        public String getTransport() {
            return transport;
        }

        public void setTransport(String transport) {
            this.transport = transport;
        }

        public @Nullable String getToken() {
            return token;
        }

        public void setToken(@Nullable String token) {
            this.token = token;
        }

        public Duration getConnectTimeout() {
            return connectTimeout;
        }

        public void setConnectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
        }

        public Duration getIdleTimeout() {
            return idleTimeout;
        }

        public void setIdleTimeout(Duration idleTimeout) {
            this.idleTimeout = idleTimeout;
        }

        public int getMaxIterations() {
            return maxIterations;
        }

        public void setMaxIterations(int maxIterations) {
            this.maxIterations = maxIterations;
        }

        public @Nullable Path getSkillsDir() {
            return skillsDir;
        }

        public void setSkillsDir(@Nullable Path skillsDir) {
            this.skillsDir = skillsDir;
        }

        public List<Model> getModels() {
            return models;
        }

        public void setModels(List<Model> models) {
            this.models = models;
        }

        public ApiServer getApiServer() {
            return apiServer;
        }

        public void setApiServer(ApiServer apiServer) {
            this.apiServer = apiServer;
        }

        public List<String> getBridgeAttachmentTypes() {
            return bridgeAttachmentTypes;
        }

        public void setBridgeAttachmentTypes(List<String> bridgeAttachmentTypes) {
            this.bridgeAttachmentTypes = bridgeAttachmentTypes;
        }
    }

    /**
     * How the adapter treats Hermes' API server ({@code parley.hermes.transport=API_SERVER}). Each behaviour is
     * DETECT (from the server's capabilities and version), ON or OFF; strings, so these properties bind
     * also where the Hermes module is left out.
     */
    public static class ApiServer {
        /** Whether the server restores a session's earlier turns from its id (0.20+); else history is sent. */
        private String sessionHistory = "DETECT";
        /** Whether the server honours Idempotency-Key on a start, so a lost answer may be retried. */
        private String idempotentStart = "DETECT";
        /** Whether the server has clarify questions. */
        private String clarify = "DETECT";
        /** Hermes' approvals.timeout: how long the server waits for an approval before it denies. */
        private Duration approvalTimeout = Duration.ofSeconds(60);
        /** How long what the server said about itself is kept. */
        private Duration infoTtl = Duration.ofMinutes(10);

        public String getSessionHistory() {
            return sessionHistory;
        }

        public void setSessionHistory(String sessionHistory) {
            this.sessionHistory = sessionHistory;
        }

        public String getIdempotentStart() {
            return idempotentStart;
        }

        public void setIdempotentStart(String idempotentStart) {
            this.idempotentStart = idempotentStart;
        }

        public String getClarify() {
            return clarify;
        }

        public void setClarify(String clarify) {
            this.clarify = clarify;
        }

        public Duration getApprovalTimeout() {
            return approvalTimeout;
        }

        public void setApprovalTimeout(Duration approvalTimeout) {
            this.approvalTimeout = approvalTimeout;
        }

        public Duration getInfoTtl() {
            return infoTtl;
        }

        public void setInfoTtl(Duration infoTtl) {
            this.infoTtl = infoTtl;
        }
    }

    /** A model a person may choose. */
    public static class Model {
        /** The id the selector shows and requests carry. */
        private String id = "";
        /** The model name the provider knows. */
        private String name = "";
        private @Nullable String provider;
        private @Nullable String baseUrl;
        /** The provider API key; sent to the runtime only, never logged, shown or stored. */
        private @Nullable String apiKey;

        public String getId() {
            return id;
        }

        public void setId(String id) {
            this.id = id;
        }

        public String getName() {
            return name;
        }

        public void setName(String name) {
            this.name = name;
        }

        public @Nullable String getProvider() {
            return provider;
        }

        public void setProvider(@Nullable String provider) {
            this.provider = provider;
        }

        public @Nullable String getBaseUrl() {
            return baseUrl;
        }

        public void setBaseUrl(@Nullable String baseUrl) {
            this.baseUrl = baseUrl;
        }

        public @Nullable String getApiKey() {
            return apiKey;
        }

        public void setApiKey(@Nullable String apiKey) {
            this.apiKey = apiKey;
        }

        @Override
        public String toString() {
            return "Model{id=" + id + ", name=" + name + ", provider=" + provider + ", apiKey="
                    + (apiKey == null ? "none" : "****") + "}";
        }
    }
}
