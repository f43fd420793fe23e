package dev.parley.chat.mcp;

import dev.parley.chat.ChatException;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * One MCP server the host connects to: how (a command started over stdio, or a streamable HTTP endpoint),
 * and how its tool calls are approved and timed. Immutable; the {@code with…} methods return changed copies.
 *
 * @param name the server's name, the first part of its tools' names ({@code <name>__<tool>}): 1 to 32
 *     letters, digits, {@code _} or {@code -}
 * @param command for stdio: the command and its arguments (empty for HTTP)
 * @param env for stdio: variables added to the process's environment, which is otherwise the whole
 *     environment of the host's JVM (the SDK starts it so): keep secrets out of it for untrusted servers
 * @param url for streamable HTTP: the endpoint, e.g. {@code https://mcp.example.com/mcp} (null for stdio)
 * @param headers for HTTP: headers sent with every request (e.g. {@code Authorization})
 * @param approval the approval of every tool of the server without one of its own; null to follow each
 *     tool's {@code readOnlyHint} (see {@link McpApproval})
 * @param toolApprovals per tool (by the server's own tool name), overriding {@code approval}
 * @param callTimeout how long one request (a call, a listing) may take before it fails
 * @param connectTimeout how long connecting and the MCP handshake may take
 */
public record McpServer(
        String name,
        List<String> command,
        Map<String, String> env,
        @Nullable URI url,
        Map<String, String> headers,
        @Nullable McpApproval approval,
        Map<String, McpApproval> toolApprovals,
        Duration callTimeout,
        Duration connectTimeout) {

    private static final Pattern NAME = Pattern.compile("[a-zA-Z0-9_-]{1,32}");
    /** The request timeout unless set. */
    public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(60);
    /** The connect timeout unless set. */
    public static final Duration DEFAULT_CONNECT_TIMEOUT = Duration.ofSeconds(30);

    /** @throws ChatException CONFIGURATION for a bad name, no transport or both, a timeout that is not positive */
    public McpServer {
        Objects.requireNonNull(name, "name");
        if (!NAME.matcher(name).matches()) {
            throw ChatException.configuration("an MCP server's name is 1 to 32 letters, digits, _ or -, got '"
                    + name + "'");
        }
        command = List.copyOf(command);
        env = Map.copyOf(env);
        headers = Map.copyOf(headers);
        toolApprovals = Map.copyOf(toolApprovals);
        if (command.isEmpty() == (url == null)) {
            throw ChatException.configuration("MCP server " + name + " needs either a command or a URL");
        }
        if (!positive(callTimeout) || !positive(connectTimeout)) {
            throw ChatException.configuration("MCP server " + name + ": timeouts must be positive");
        }
    }

    /** A server started as {@code command args…}, spoken to over its standard input and output. */
    public static McpServer stdio(String name, String command, String... args) {
        List<String> line = new java.util.ArrayList<>();
        line.add(Objects.requireNonNull(command, "command"));
        line.addAll(List.of(args));
        return new McpServer(name, line, Map.of(), null, Map.of(), null, Map.of(), DEFAULT_CALL_TIMEOUT,
                DEFAULT_CONNECT_TIMEOUT);
    }

    /** A server at a streamable HTTP endpoint. */
    public static McpServer http(String name, String url) {
        return new McpServer(name, List.of(), Map.of(), URI.create(url), Map.of(), null, Map.of(),
                DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT);
    }

    /** True for a server started over stdio. */
    public boolean isStdio() {
        return url == null;
    }

    /** The same server with {@code variables} added to the process's environment (stdio). */
    public McpServer withEnv(Map<String, String> variables) {
        Map<String, String> all = new HashMap<>(env);
        all.putAll(variables);
        return new McpServer(name, command, all, url, headers, approval, toolApprovals, callTimeout, connectTimeout);
    }

    /** The same server sending {@code header: value} with every HTTP request (for example for auth). */
    public McpServer withHeader(String header, String value) {
        Map<String, String> all = new HashMap<>(headers);
        all.put(Objects.requireNonNull(header, "header"), Objects.requireNonNull(value, "value"));
        return new McpServer(name, command, env, url, all, approval, toolApprovals, callTimeout, connectTimeout);
    }

    /** The same server with {@code value} for every tool that has no approval of its own. */
    public McpServer withApproval(McpApproval value) {
        return new McpServer(name, command, env, url, headers, Objects.requireNonNull(value, "approval"),
                toolApprovals, callTimeout, connectTimeout);
    }

    /** The same server with {@code value} for its tool {@code tool} (the server's own name for it). */
    public McpServer withToolApproval(String tool, McpApproval value) {
        Map<String, McpApproval> all = new HashMap<>(toolApprovals);
        all.put(Objects.requireNonNull(tool, "tool"), Objects.requireNonNull(value, "approval"));
        return new McpServer(name, command, env, url, headers, approval, all, callTimeout, connectTimeout);
    }

    /** The same server with another request timeout. */
    public McpServer withCallTimeout(Duration value) {
        return new McpServer(name, command, env, url, headers, approval, toolApprovals, value, connectTimeout);
    }

    /** The same server with another connect timeout. */
    public McpServer withConnectTimeout(Duration value) {
        return new McpServer(name, command, env, url, headers, approval, toolApprovals, callTimeout, value);
    }

    private static boolean positive(Duration value) {
        return value != null && !value.isNegative() && !value.isZero();
    }
}
