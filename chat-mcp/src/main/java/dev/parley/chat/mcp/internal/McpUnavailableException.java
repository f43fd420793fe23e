package dev.parley.chat.mcp.internal;

/** An MCP server cannot be reached now (down, restarting after a failure, or closed). */
public final class McpUnavailableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public McpUnavailableException(String message) {
        super(message);
    }

    public McpUnavailableException(String message, Throwable cause) {
        super(message, cause);
    }
}
