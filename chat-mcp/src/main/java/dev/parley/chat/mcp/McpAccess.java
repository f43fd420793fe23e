package dev.parley.chat.mcp;

import dev.parley.chat.engine.HostActionScope;

/**
 * Which MCP tools a run may use, decided by the host per run (for example by the run's owner). Called on an
 * engine worker thread when a run starts, for every tool of every connected server; it must be quick and
 * must not throw (a throw offers the run no MCP tools at all).
 */
@FunctionalInterface
public interface McpAccess {

    /** Every run may use every tool of every server. */
    static McpAccess all() {
        return (scope, server, tool) -> true;
    }

    /**
     * @param scope the run
     * @param server the server's configured name
     * @param tool the tool's name on that server (not the prefixed name the model sees)
     * @return true if the run is offered the tool
     */
    boolean allows(HostActionScope scope, String server, String tool);
}
