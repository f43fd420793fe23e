package dev.parley.chat.spring;

import dev.parley.chat.engine.ApprovalPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The MCP servers whose tools the agent may call ({@code parley.mcp.*}), read when {@code chat-mcp} is on the
 * classpath (see the starter's README, "MCP tools", and docs/MCP.md).
 *
 * <p>Servers and their per-tool settings are lists with a {@code name}, not maps keyed by name: a name is a
 * value bound as written and checked with a message naming the property, where Spring reshapes map keys (it
 * drops characters such as {@code /} from keys that are not bracketed, and a {@code .} splits one); the order
 * of the servers is the order their tools are offered in. The cost: overriding one server from an
 * environment variable takes its index ({@code PARLEY_MCP_SERVERS_0_URL}).
 */
@ConfigurationProperties(prefix = "parley.mcp")
public class ParleyMcpProperties {
    /** The servers, in the order their tools are offered. None: no MCP tools. */
    private List<Server> servers = new ArrayList<>();
    /** Whether to connect every server at start-up (failures are logged); false: when the first run asks. */
    private boolean connectAtStart;
    /** The longest tool result, in characters, handed to the model; longer ones are cut with a marker. */
    private int maxResultChars = 100_000;
    /**
     * How often the servers used so far are checked in the background: pinged, and one that is down (a stdio
     * process that died, an HTTP server gone) connected again as its backoff allows. Zero turns checks off.
     */
    private Duration healthCheckInterval = Duration.ofSeconds(30);

    public List<Server> getServers() {
        return servers;
    }

    public void setServers(List<Server> servers) {
        this.servers = servers;
    }

    public boolean isConnectAtStart() {
        return connectAtStart;
    }

    public void setConnectAtStart(boolean connectAtStart) {
        this.connectAtStart = connectAtStart;
    }

    public int getMaxResultChars() {
        return maxResultChars;
    }

    public void setMaxResultChars(int maxResultChars) {
        this.maxResultChars = maxResultChars;
    }

    public Duration getHealthCheckInterval() {
        return healthCheckInterval;
    }

    public void setHealthCheckInterval(Duration healthCheckInterval) {
        this.healthCheckInterval = healthCheckInterval;
    }

    /** One MCP server: either {@code command} (stdio) or {@code url} (streamable HTTP). */
    public static class Server {
        /**
         * The server's name, the first part of its tools' names ({@code <name>__<tool>}): 1 to 32 letters,
         * digits, {@code _} or {@code -}, unique among the servers.
         */
        private String name = "";
        /** For stdio: the program to start, e.g. {@code npx}. */
        private @Nullable String command;
        /** For stdio: the program's arguments. */
        private List<String> args = new ArrayList<>();
        /**
         * For stdio: variables added to the process's environment, which is otherwise the application's whole
         * environment: keep secrets out of it for servers you do not trust.
         */
        private Map<String, String> env = new LinkedHashMap<>();
        /** For streamable HTTP: the endpoint, e.g. {@code https://mcp.example.com/mcp}. */
        private @Nullable String url;
        /** For streamable HTTP: headers sent with every request, e.g. {@code Authorization}. */
        private Map<String, String> headers = new LinkedHashMap<>();
        /** How long one request (a tool call, a listing) may take before it fails. */
        private Duration callTimeout = Duration.ofSeconds(60);
        /** How long connecting and the MCP handshake may take. */
        private Duration connectTimeout = Duration.ofSeconds(30);
        /**
         * Whether a person approves a call of the server's tools first: {@code never}, {@code always} or
         * {@code once-per-thread}. Unset: only the tools the server marks {@code readOnlyHint: true} run
         * without asking (the hint is not trusted further).
         */
        private @Nullable ApprovalPolicy approval;
        /** Whether the person may edit a call's arguments before allowing it; needs {@code approval}. */
        private boolean editableArguments;
        /** Settings of single tools, overriding the server's. */
        private List<Tool> tools = new ArrayList<>();
        /** The server's tools (its own names) a run may use; empty: all but those denied. */
        private List<String> allow = new ArrayList<>();
        /** The server's tools (its own names) no run may use. */
        private List<String> deny = new ArrayList<>();

        public String getName() {
            return name;
        }

        public void setName(String name) {
            this.name = name;
        }

        public @Nullable String getCommand() {
            return command;
        }

        public void setCommand(@Nullable String command) {
            this.command = command;
        }

        public List<String> getArgs() {
            return args;
        }

        public void setArgs(List<String> args) {
            this.args = args;
        }

        public Map<String, String> getEnv() {
            return env;
        }

        public void setEnv(Map<String, String> env) {
            this.env = env;
        }

        public @Nullable String getUrl() {
            return url;
        }

        public void setUrl(@Nullable String url) {
            this.url = url;
        }

        public Map<String, String> getHeaders() {
            return headers;
        }

        public void setHeaders(Map<String, String> headers) {
            this.headers = headers;
        }

        public Duration getCallTimeout() {
            return callTimeout;
        }

        public void setCallTimeout(Duration callTimeout) {
            this.callTimeout = callTimeout;
        }

        public Duration getConnectTimeout() {
            return connectTimeout;
        }

        public void setConnectTimeout(Duration connectTimeout) {
            this.connectTimeout = connectTimeout;
        }

        public @Nullable ApprovalPolicy getApproval() {
            return approval;
        }

        public void setApproval(@Nullable ApprovalPolicy approval) {
            this.approval = approval;
        }

        public boolean isEditableArguments() {
            return editableArguments;
        }

        public void setEditableArguments(boolean editableArguments) {
            this.editableArguments = editableArguments;
        }

        public List<Tool> getTools() {
            return tools;
        }

        public void setTools(List<Tool> tools) {
            this.tools = tools;
        }

        public List<String> getAllow() {
            return allow;
        }

        public void setAllow(List<String> allow) {
            this.allow = allow;
        }

        public List<String> getDeny() {
            return deny;
        }

        public void setDeny(List<String> deny) {
            this.deny = deny;
        }
    }

    /** The approval of one tool of a server, overriding the server's. */
    public static class Tool {
        /** The tool's name on its server (not the prefixed name the model sees). */
        private String name = "";
        /** {@code never}, {@code always} or {@code once-per-thread}. */
        private @Nullable ApprovalPolicy approval;
        /** Whether the person may edit a call's arguments before allowing it. */
        private boolean editableArguments;

        public String getName() {
            return name;
        }

        public void setName(String name) {
            this.name = name;
        }

        public @Nullable ApprovalPolicy getApproval() {
            return approval;
        }

        public void setApproval(@Nullable ApprovalPolicy approval) {
            this.approval = approval;
        }

        public boolean isEditableArguments() {
            return editableArguments;
        }

        public void setEditableArguments(boolean editableArguments) {
            this.editableArguments = editableArguments;
        }
    }
}
