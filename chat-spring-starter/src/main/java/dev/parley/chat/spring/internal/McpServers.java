package dev.parley.chat.spring.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.mcp.McpAccess;
import dev.parley.chat.mcp.McpApproval;
import dev.parley.chat.mcp.McpServer;
import dev.parley.chat.mcp.McpTools;
import dev.parley.chat.spring.ParleyMcpProperties;
import java.net.URI;
import java.net.URISyntaxException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Turns {@code parley.mcp.*} into {@link McpTools}. Every mistake is a {@link ChatException} CONFIGURATION
 * whose message names the property, e.g. {@code parley.mcp.servers[1].url}.
 */
public final class McpServers {
    private static final Pattern NAME = Pattern.compile("[a-zA-Z0-9_-]{1,32}");

    private McpServers() {
    }

    /**
     * The tools of the configured servers; a run may use a tool when the server's allow and deny lists and
     * {@code hostAccess} all let it.
     */
    public static McpTools build(ParleyMcpProperties properties, McpAccess hostAccess) {
        McpTools.Builder builder = McpTools.builder()
                .connectAtStart(properties.isConnectAtStart());
        if (properties.getHealthCheckInterval() == null || properties.getHealthCheckInterval().isNegative()) {
            throw ChatException.configuration("parley.mcp.health-check-interval must be zero (off) or positive, got "
                    + properties.getHealthCheckInterval());
        }
        builder.healthCheckInterval(properties.getHealthCheckInterval());
        if (properties.getMaxResultChars() < 1) {
            throw ChatException.configuration("parley.mcp.max-result-chars must be positive, got "
                    + properties.getMaxResultChars());
        }
        builder.maxResultChars(properties.getMaxResultChars());
        Map<String, ToolFilter> filters = new HashMap<>();
        List<ParleyMcpProperties.Server> servers = properties.getServers();
        for (int i = 0; i < servers.size(); i++) {
            String property = "parley.mcp.servers[" + i + "]";
            ParleyMcpProperties.Server server = servers.get(i);
            McpServer built = server(property, server);
            if (filters.putIfAbsent(built.name(), new ToolFilter(server.getAllow(), server.getDeny())) != null) {
                throw ChatException.configuration(property + ".name: another server is named '" + built.name() + "'");
            }
            builder.server(built);
        }
        return builder.access((scope, server, tool) -> filters.get(server).allows(tool)
                && hostAccess.allows(scope, server, tool)).build();
    }

    private static McpServer server(String property, ParleyMcpProperties.Server server) {
        String name = server.getName() == null ? "" : server.getName().strip();
        if (!NAME.matcher(name).matches()) {
            throw ChatException.configuration(property + ".name must be 1 to 32 letters, digits, _ or -, got '"
                    + name + "'");
        }
        String at = property + " (" + name + ")";
        boolean stdio = server.getCommand() != null && !server.getCommand().isBlank();
        boolean http = server.getUrl() != null && !server.getUrl().isBlank();
        if (stdio == http) {
            throw ChatException.configuration(at + " needs either a command (stdio) or a url (streamable HTTP)"
                    + (stdio ? ", not both" : ""));
        }
        if (stdio && !server.getHeaders().isEmpty()) {
            throw ChatException.configuration(at + ".headers are sent to a url; this server has a command");
        }
        if (http && (!server.getArgs().isEmpty() || !server.getEnv().isEmpty())) {
            throw ChatException.configuration(at + ".args and .env are for a command; this server has a url");
        }
        List<String> command = new ArrayList<>();
        if (stdio) {
            command.add(server.getCommand().strip());
            command.addAll(server.getArgs());
        }
        URI url = http ? url(at + ".url", server.getUrl().strip()) : null;
        if (server.isEditableArguments() && server.getApproval() == null) {
            throw ChatException.configuration(at + ".editable-arguments needs " + property
                    + ".approval (never, always or once-per-thread)");
        }
        McpApproval approval = server.getApproval() == null ? null
                : new McpApproval(server.getApproval(), server.isEditableArguments());
        Map<String, McpApproval> tools = new HashMap<>();
        for (int t = 0; t < server.getTools().size(); t++) {
            ParleyMcpProperties.Tool tool = server.getTools().get(t);
            String toolProperty = property + ".tools[" + t + "]";
            if (tool.getName() == null || tool.getName().isBlank()) {
                throw ChatException.configuration(toolProperty + ".name is missing");
            }
            if (tool.getApproval() == null) {
                throw ChatException.configuration(toolProperty + ".approval is missing (never, always or once-per-thread)");
            }
            if (tools.put(tool.getName(), new McpApproval(tool.getApproval(), tool.isEditableArguments())) != null) {
                throw ChatException.configuration(toolProperty + ".name: the tool " + tool.getName() + " is listed twice");
            }
        }
        try {
            return new McpServer(name, command, server.getEnv(), url, server.getHeaders(), approval, tools,
                    server.getCallTimeout(), server.getConnectTimeout());
        } catch (ChatException e) {
            throw ChatException.configuration(at + ": " + e.getMessage());
        }
    }

    private static URI url(String property, String value) {
        try {
            URI uri = new URI(value);
            String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(java.util.Locale.ROOT);
            if ((scheme.equals("http") || scheme.equals("https")) && uri.getHost() != null) {
                return uri;
            }
        } catch (URISyntaxException e) {
            // reported below, with the rest
        }
        throw ChatException.configuration(property + " must be an http or https URL, got '" + value + "'");
    }

    /** A server's allow and deny lists: a tool passes when it is allowed (or none are listed) and not denied. */
    private record ToolFilter(Set<String> allow, Set<String> deny) {
        ToolFilter(List<String> allow, List<String> deny) {
            this(new HashSet<>(allow), new HashSet<>(deny));
        }

        boolean allows(String tool) {
            return (allow.isEmpty() || allow.contains(tool)) && !deny.contains(tool);
        }
    }
}
