package dev.parley.chat.mcp.internal;

import dev.parley.chat.mcp.McpServer;
import io.modelcontextprotocol.client.McpClient;
import io.modelcontextprotocol.client.McpAsyncClient;
import io.modelcontextprotocol.client.transport.HttpClientStreamableHttpTransport;
import io.modelcontextprotocol.client.transport.ServerParameters;
import io.modelcontextprotocol.client.transport.StdioClientTransport;
import io.modelcontextprotocol.json.McpJsonDefaults;
import io.modelcontextprotocol.spec.McpClientTransport;
import io.modelcontextprotocol.spec.McpSchema;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;

/**
 * The client side of one MCP server: connects on first use (or when asked), keeps the server's latest tool
 * list (re-listed on {@code tools/list_changed}), and after a failure (a stdio process that died, an HTTP
 * server gone) drops the connection and connects again on a later use, waiting longer after each failure in a
 * row (1 s doubling to 30 s), on its next use or at the next health check ({@link #checkHealth}). A stdio
 * server's process is watched: when it ends, the calls in flight fail at once (the SDK would wait for their
 * timeout). Thread-safe: connecting is serialised, calls run concurrently.
 */
public final class ServerConnection implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ServerConnection.class);
    static final Duration FIRST_BACKOFF = Duration.ofSeconds(1);
    static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

    private final McpServer server;
    private final Clock clock;

    // written under this (which a connect holds throughout); the volatile ones are read without it
    private volatile @Nullable Connected client;
    private volatile List<McpSchema.Tool> tools = List.of();
    private volatile @Nullable Instant retryAt;
    private Duration backoff = FIRST_BACKOFF;
    private @Nullable String lastFailure;
    private volatile boolean closed;
    /** A connect was tried: later ones happen in the background when a run asks for tools. */
    private volatile boolean attempted;
    private final AtomicBoolean reconnecting = new AtomicBoolean();

    public ServerConnection(McpServer server, Clock clock) {
        this.server = server;
        this.clock = clock;
    }

    public McpServer server() {
        return server;
    }

    /**
     * The tools to offer a run now. The first time, connects and waits for the listing; after a failure,
     * connects again in the background (when the backoff allows) and answers with the tools known, so that a
     * server that is down does not hold up the runs. A failure is logged and remembered, not thrown.
     */
    public List<McpSchema.Tool> refresh() {
        // without the lock: a connect in the background holds it for as long as it takes
        Connected current = client;
        if (closed || current != null && !current.ended().isDone()) {
            return tools;
        }
        if (attempted) {
            Instant retry = retryAt;
            if ((retry == null || !clock.instant().isBefore(retry)) && reconnecting.compareAndSet(false, true)) {
                Thread connecting = new Thread(this::reconnect, "parley-mcp-" + server.name() + "-connect");
                connecting.setDaemon(true);
                connecting.start();
            }
            return tools;
        }
        try {
            client();
        } catch (McpUnavailableException e) {
            log.debug("MCP server {}: {}", server.name(), e.getMessage());
        }
        return tools;
    }

    private void reconnect() {
        try {
            client();
        } catch (RuntimeException e) {
            log.debug("MCP server {}: {}", server.name(), e.getMessage());
        } finally {
            reconnecting.set(false);
        }
    }

    /** The tool the server offers now under its own name {@code tool}, if it does. */
    public McpSchema.@Nullable Tool tool(String tool) {
        return tools.stream().filter(t -> t.name().equals(tool)).findFirst().orElse(null);
    }

    /**
     * Calls {@code tool}, blocking until its result, its timeout or the end of the server's process. A
     * transport failure drops the connection (the next use connects again); a timeout does not (the server
     * may still be working on it).
     *
     * @throws McpUnavailableException if the server cannot be reached now, or failed during the call
     * @throws IllegalStateException if the server did not answer within its call timeout
     * @throws io.modelcontextprotocol.spec.McpError if the server answered with a protocol error
     */
    public McpSchema.CallToolResult call(String tool, Map<String, Object> arguments) throws InterruptedException {
        Connected connected = client();
        CompletableFuture<McpSchema.CallToolResult> call = connected.client()
                .callTool(McpSchema.CallToolRequest.builder(tool).arguments(arguments).build()).toFuture();
        try {
            CompletableFuture.anyOf(call, connected.ended()).get();
            if (!call.isDone()) {
                call.cancel(true);
                throw new McpUnavailableException("the MCP server " + server.name() + " stopped during the call: "
                        + connected.ended().getNow("its process ended"));
            }
            return call.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof TimeoutException) {
                // the server may still be working on it: the connection stays
                throw new IllegalStateException("the MCP server " + server.name() + " did not answer within "
                        + server.callTimeout().toSeconds() + " s", cause);
            }
            if (cause instanceof io.modelcontextprotocol.spec.McpError protocol) {
                throw protocol;
            }
            dropped(connected, cause);
            throw new McpUnavailableException("the MCP server " + server.name() + " failed during the call ("
                    + message(cause) + "); it is connected again on the next call", cause);
        } catch (McpUnavailableException e) {
            dropped(connected, e);
            throw e;
        }
    }

    /**
     * The background health check: a connected server is pinged (within its call timeout), and one that does
     * not answer is dropped; a server that is down — its process ended, a ping or a call failed, a connect
     * failed — is connected again when the backoff allows, so that a dead stdio server is started again
     * before a call needs it. A server nobody has used yet is left alone (it connects on first use).
     */
    public void checkHealth() {
        if (closed || !attempted) {
            return;
        }
        Connected current = client;
        if (current != null && !current.ended().isDone()) {
            try {
                current.client().ping().block(server.callTimeout());
                return;
            } catch (RuntimeException e) {
                dropped(current, e);
            }
        }
        Instant retry = retryAt;
        if (retry == null || !clock.instant().isBefore(retry)) {
            try {
                client();
            } catch (RuntimeException e) {
                log.debug("MCP server {}: {}", server.name(), e.getMessage());
            }
        }
    }

    /** A client and what ends it: completed (with why) when a stdio server's process ends. */
    private record Connected(McpAsyncClient client, CompletableFuture<String> ended) {
    }

    private synchronized Connected client() {
        if (closed) {
            throw new McpUnavailableException("MCP server " + server.name() + " is closed");
        }
        Connected current = client;
        if (current != null) {
            if (!current.ended().isDone()) {
                return current;
            }
            log.info("MCP server {}: its process ended ({}); starting it again", server.name(), current.ended().join());
            closeQuietly(current.client());
            client = null;
        }
        attempted = true;
        Instant now = clock.instant();
        if (retryAt != null && now.isBefore(retryAt)) {
            throw new McpUnavailableException("MCP server " + server.name() + " is unavailable (" + lastFailure
                    + "); it is tried again in " + Duration.between(now, retryAt).toMillis() + " ms");
        }
        McpClientTransport transport = transport();
        McpAsyncClient fresh = McpClient.async(transport)
                .clientInfo(new McpSchema.Implementation("parley", "Parley", "0.1"))
                .requestTimeout(server.callTimeout())
                .initializationTimeout(server.connectTimeout())
                .toolsChangeConsumer(listed -> Mono.fromRunnable(() -> toolsChanged(listed)))
                .build();
        CompletableFuture<String> ended = new CompletableFuture<>();
        try {
            fresh.initialize().block();
            if (transport instanceof StdioClientTransport stdio) {
                watch(stdio, ended);
            }
            tools = List.copyOf(fresh.listTools().block().tools());
        } catch (RuntimeException e) {
            closeQuietly(fresh);
            // a stdio command that cannot start shows in the SDK only as a handshake that timed out
            lastFailure = message(e) + (server.isStdio() ? " (started as " + server.command().get(0) + ")" : "");
            retryAt = now.plus(backoff);
            backoff = backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : backoff.multipliedBy(2);
            log.warn("MCP server {} could not be reached: {}; trying again in {} s at the earliest", server.name(),
                    lastFailure, Duration.between(now, retryAt).toSeconds());
            throw new McpUnavailableException("MCP server " + server.name() + " is unavailable: " + lastFailure, e);
        }
        log.info("MCP server {} connected: {} tool(s)", server.name(), tools.size());
        Connected connected = new Connected(fresh, ended);
        client = connected;
        retryAt = null;
        backoff = FIRST_BACKOFF;
        return connected;
    }

    /** Completes {@code ended} when the stdio server's process ends (on a daemon thread that waits for it). */
    private void watch(StdioClientTransport stdio, CompletableFuture<String> ended) {
        Thread watcher = new Thread(() -> {
            try {
                stdio.awaitForExit();
                ended.complete("its process ended");
            } catch (RuntimeException e) {
                ended.complete("its process could not be watched: " + message(e));
            }
        }, "parley-mcp-" + server.name() + "-exit");
        watcher.setDaemon(true);
        watcher.start();
    }

    private void toolsChanged(List<McpSchema.Tool> listed) {
        tools = List.copyOf(listed);
        log.info("MCP server {} changed its tools: {} now", server.name(), listed.size());
    }

    /** A request on {@code failed} threw: if it looks like the connection's end, the next use connects again. */
    private synchronized void dropped(Connected failed, Throwable why) {
        if (client != failed) {
            return;
        }
        log.warn("MCP server {}: a request failed ({}); it is connected again", server.name(), message(why));
        client = null;
        lastFailure = message(why);
        closeQuietly(failed.client());
    }

    private McpClientTransport transport() {
        if (server.isStdio()) {
            ServerParameters parameters = ServerParameters.builder(server.command().get(0))
                    .args(server.command().subList(1, server.command().size()))
                    .env(server.env())
                    .build();
            StdioClientTransport stdio = new StdioClientTransport(parameters, McpJsonDefaults.getMapper());
            stdio.setStdErrorHandler(line -> log.debug("MCP server {} (stderr): {}", server.name(), line));
            return stdio;
        }
        URI url = server.url();
        String endpoint = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
        if (url.getRawQuery() != null) {
            endpoint += "?" + url.getRawQuery();
        }
        Map<String, String> headers = server.headers();
        return HttpClientStreamableHttpTransport.builder(url.getScheme() + "://" + url.getRawAuthority())
                .endpoint(endpoint)
                .connectTimeout(server.connectTimeout())
                .httpRequestCustomizer((request, method, uri, body, context) -> headers.forEach(request::header))
                .build();
    }

    /** Closes the connection (a stdio server's process ends); later uses fail. */
    @Override
    public void close() {
        Connected open;
        synchronized (this) {
            closed = true;
            open = client;
            client = null;
        }
        if (open != null) {
            closeQuietly(open.client());
        }
    }

    private void closeQuietly(McpAsyncClient closing) {
        try {
            closing.closeGracefully().block(server.connectTimeout());
        } catch (RuntimeException e) {
            closing.close();
            log.debug("MCP server {}: closing failed", server.name(), e);
        }
    }

    /** What went wrong at the bottom of {@code e}: its deepest cause's type and message. */
    static String message(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        String type = cause.getClass().getSimpleName();
        return cause.getMessage() == null || cause.getMessage().isBlank() ? type : type + ": " + cause.getMessage();
    }
}
