package dev.parley.chat.mcp;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.ChatException;
import dev.parley.chat.engine.ApprovalPolicy;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionApproval;
import dev.parley.chat.engine.HostActionCall;
import dev.parley.chat.engine.HostActionScope;
import dev.parley.chat.engine.HostActionSource;
import dev.parley.chat.mcp.internal.ResultText;
import dev.parley.chat.mcp.internal.ServerConnection;
import dev.parley.chat.mcp.internal.ToolNames;
import dev.parley.chat.runtime.HostToolSpec;
import io.modelcontextprotocol.spec.McpSchema;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The tools of MCP servers as Parley host actions: register with
 * {@code ChatEngine.builder().hostActions(mcpTools)}, close after the engine.
 *
 * <p>Each tool is offered as {@code <server>__<tool>} (see docs/MCP.md for the naming rules) with the input
 * schema the server lists. A call runs through the engine's host-action path: approved first when its
 * {@link McpApproval} says so, run at most once per execution id, its result stored. What the tool returns
 * becomes the result the model reads (see {@link Builder#maxResultChars}); a result the server marks
 * {@code isError}, a transport failure, a timeout or a server that is down become error results the run goes
 * on from.
 *
 * <p>Servers are connected when the first run asks for tools, or when this is built if
 * {@link Builder#connectAtStart} is set. A server that cannot be reached offers no tools until it can (tried
 * again in the background when a run asks, after 1 s, doubling to 30 s); a server that fails after it was
 * reached keeps offering its last known tools, whose calls fail with a clear error until it is back (a stdio
 * server's process is started again on the next call, or by the health check, {@link Builder#healthCheckInterval},
 * whichever comes first). Roots, sampling and elicitation are not offered to servers.
 *
 * <p>Thread-safe.
 */
public final class McpTools implements HostActionSource, AutoCloseable {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TypeReference<Map<String, Object>> ARGUMENTS = new TypeReference<>() {
    };

    private static final Logger log = LoggerFactory.getLogger(McpTools.class);

    private final List<ServerConnection> servers;
    private final McpAccess access;
    private final int maxResultChars;
    private final @Nullable ScheduledExecutorService healthChecks;

    private McpTools(Builder b) {
        List<ServerConnection> connections = new ArrayList<>();
        for (McpServer server : b.servers.values()) {
            connections.add(new ServerConnection(server, b.clock));
        }
        this.servers = List.copyOf(connections);
        this.access = b.access;
        this.maxResultChars = b.maxResultChars;
        if (b.connectAtStart) {
            servers.forEach(ServerConnection::refresh);
        }
        if (b.healthCheckInterval.isZero() || servers.isEmpty()) {
            healthChecks = null;
        } else {
            healthChecks = Executors.newSingleThreadScheduledExecutor(task -> {
                Thread thread = new Thread(task, "parley-mcp-health");
                thread.setDaemon(true);
                return thread;
            });
            long millis = b.healthCheckInterval.toMillis();
            healthChecks.scheduleWithFixedDelay(this::checkHealth, millis, millis, TimeUnit.MILLISECONDS);
        }
    }

    private void checkHealth() {
        for (ServerConnection connection : servers) {
            try {
                connection.checkHealth();
            } catch (RuntimeException e) {
                log.warn("MCP server {}: the health check failed", connection.server().name(), e);
            }
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    /**
     * The tools of every server that {@link McpAccess} allows {@code scope}'s run, connecting servers not
     * connected yet (which may take up to their connect timeout). Names do not depend on the run: they are
     * given over all servers' tools first, then filtered.
     */
    @Override
    public List<HostAction> actionsFor(HostActionScope scope) {
        List<HostAction> actions = new ArrayList<>();
        Set<String> taken = new HashSet<>();
        for (ServerConnection connection : servers) {
            List<McpSchema.Tool> tools = new ArrayList<>(connection.refresh());
            tools.sort(Comparator.comparing(McpSchema.Tool::name));
            String server = connection.server().name();
            for (McpSchema.Tool tool : tools) {
                String name = ToolNames.name(server, tool.name(), taken);
                taken.add(name);
                if (access.allows(scope, server, tool.name())) {
                    actions.add(action(connection, tool, name));
                }
            }
        }
        return actions;
    }

    private HostAction action(ServerConnection connection, McpSchema.Tool tool, String name) {
        String description = tool.description() != null ? tool.description() : tool.title() != null ? tool.title() : "";
        HostToolSpec spec = new HostToolSpec(name, description, schema(tool));
        return new HostAction(spec, call -> call(connection, tool.name(), call), approval(connection.server(), tool));
    }

    private String call(ServerConnection connection, String tool, HostActionCall call) throws Exception {
        String server = connection.server().name();
        if (connection.tool(tool) == null) {
            throw new IllegalStateException("the MCP server " + server + " no longer offers the tool " + tool);
        }
        Map<String, Object> arguments = call.arguments().isBlank() ? Map.of() : JSON.readValue(call.arguments(), ARGUMENTS);
        McpSchema.CallToolResult result = connection.call(tool, arguments == null ? Map.of() : arguments);
        String text = ResultText.of(result, maxResultChars);
        if (Boolean.TRUE.equals(result.isError())) {
            throw new McpToolException("the MCP tool " + tool + " of " + server + " reported an error: " + text);
        }
        return text;
    }

    /** The tool's input schema as JSON, without {@code $schema} (some model providers refuse it). */
    private static String schema(McpSchema.Tool tool) {
        Map<String, Object> schema = tool.inputSchema() == null ? new LinkedHashMap<>()
                : new LinkedHashMap<>(tool.inputSchema());
        schema.remove("$schema");
        schema.putIfAbsent("type", "object");
        try {
            return JSON.writeValueAsString(schema);
        } catch (JsonProcessingException e) {
            return "{\"type\":\"object\"}";
        }
    }

    /** The tool's approval: its own, else its server's, else ALWAYS unless the server marks it read-only. */
    static HostActionApproval approval(McpServer server, McpSchema.Tool tool) {
        McpApproval chosen = server.toolApprovals().get(tool.name());
        if (chosen == null) {
            chosen = server.approval();
        }
        if (chosen == null) {
            chosen = readOnly(tool) ? McpApproval.never() : McpApproval.always();
        }
        String hint = readOnly(tool) ? "the server says it only reads"
                : tool.annotations() != null && Boolean.FALSE.equals(tool.annotations().destructiveHint())
                        ? "the server says it may change things, without destroying any"
                        : "the server does not say it only reads: it may change or delete things";
        String text = "Calls " + tool.name() + " on the MCP server " + server.name() + " (" + hint + ").";
        return new HostActionApproval(chosen.policy(), call -> text, chosen.argumentsEditable(), null);
    }

    private static boolean readOnly(McpSchema.Tool tool) {
        return tool.annotations() != null && Boolean.TRUE.equals(tool.annotations().readOnlyHint());
    }

    /** Stops the health checks and closes every server's connection (stdio processes end). Idempotent. */
    @Override
    public void close() {
        if (healthChecks != null) {
            healthChecks.shutdownNow();
        }
        servers.forEach(ServerConnection::close);
    }

    /** An MCP tool answered with {@code isError}: its text goes to the model as an error result. */
    static final class McpToolException extends Exception {
        private static final long serialVersionUID = 1L;

        McpToolException(String message) {
            super(message);
        }
    }

    /** Configures {@link McpTools}. Not thread-safe; {@link #build()} once. */
    public static final class Builder {
        /** The result size unless set: longer results are cut, with a marker. */
        public static final int DEFAULT_MAX_RESULT_CHARS = 100_000;
        /** How often servers are checked unless set. */
        public static final Duration DEFAULT_HEALTH_CHECK_INTERVAL = Duration.ofSeconds(30);

        private final Map<String, McpServer> servers = new LinkedHashMap<>();
        private McpAccess access = McpAccess.all();
        private boolean connectAtStart;
        private int maxResultChars = DEFAULT_MAX_RESULT_CHARS;
        private Clock clock = Clock.systemUTC();
        private Duration healthCheckInterval = DEFAULT_HEALTH_CHECK_INTERVAL;

        private Builder() {
        }

        /** @throws ChatException CONFIGURATION for a second server of the same name */
        public Builder server(McpServer server) {
            Objects.requireNonNull(server, "server");
            if (servers.putIfAbsent(server.name(), server) != null) {
                throw ChatException.configuration("an MCP server named " + server.name() + " exists");
            }
            return this;
        }

        /** Which tools a run may use (default: all of every server). */
        public Builder access(McpAccess value) {
            this.access = Objects.requireNonNull(value, "access");
            return this;
        }

        /** True: connect every server in {@link #build()} (failures are logged); false (default): on first use. */
        public Builder connectAtStart(boolean value) {
            this.connectAtStart = value;
            return this;
        }

        /** The longest result, in characters, handed to the model; longer ones are cut with a marker. */
        public Builder maxResultChars(int value) {
            if (value < 1) {
                throw ChatException.configuration("maxResultChars must be positive, got " + value);
            }
            this.maxResultChars = value;
            return this;
        }

        /**
         * How often every server used so far is checked in the background (default 30 s; zero turns the checks
         * off): a connected server is pinged and dropped if it does not answer within its call timeout, and a
         * server that is down (a stdio process that died, an HTTP server gone) is connected again, its process
         * started again, as its backoff allows — so the next call finds it up.
         *
         * @throws ChatException CONFIGURATION if negative
         */
        public Builder healthCheckInterval(Duration value) {
            Objects.requireNonNull(value, "value");
            if (value.isNegative()) {
                throw ChatException.configuration("healthCheckInterval must not be negative, got " + value);
            }
            this.healthCheckInterval = value;
            return this;
        }

        /** The clock the reconnect backoff is measured on (for tests). */
        public Builder clock(Clock value) {
            this.clock = Objects.requireNonNull(value, "clock");
            return this;
        }

        public McpTools build() {
            return new McpTools(this);
        }
    }
}
