package dev.parley.chat.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * The real MCP servers of the tests, from npm (installed by the build into src/test/mcp-servers from its lock
 * file), run under Node.js: server-everything over stdio and streamable HTTP, server-filesystem over stdio,
 * and changing-tools.mjs (on the official TypeScript SDK) whose tool list changes.
 */
final class McpTestServers {
    static final Path DIR = Path.of("src/test/mcp-servers").toAbsolutePath();
    static final Path EVERYTHING = DIR.resolve("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    static final Path FILESYSTEM = DIR.resolve("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");

    private McpTestServers() {
    }

    static McpServer everything(String name) {
        return McpServer.stdio(name, "node", EVERYTHING.toString(), "stdio");
    }

    /** server-everything over stdio, its process id written to {@code pidFile} (for killing it). */
    static McpServer everythingTellingItsPid(String name, Path pidFile) {
        return McpServer.stdio(name, "sh", "-c", "echo $$ > '" + pidFile + "'; exec node '" + EVERYTHING + "' stdio");
    }

    static McpServer filesystem(String name, Path allowed) {
        return McpServer.stdio(name, "node", FILESYSTEM.toString(), allowed.toString());
    }

    static McpServer changingTools(String name) {
        return McpServer.stdio(name, "node", DIR.resolve("changing-tools.mjs").toString());
    }

    /**
     * server-everything over streamable HTTP on a free loopback port, writing each request's Authorization
     * header as a line to {@code authorizations}; {@link #close()} ends it.
     */
    record HttpServer(Process process, String url) implements AutoCloseable {
        static HttpServer start(Path authorizations) throws IOException, InterruptedException {
            int port;
            try (ServerSocket probe = new ServerSocket(0)) {
                port = probe.getLocalPort();
            }
            ProcessBuilder builder = new ProcessBuilder(List.of("node", "--require", DIR.resolve("loopback.cjs").toString(),
                    "--require", DIR.resolve("record-authorization.cjs").toString(), EVERYTHING.toString(),
                    "streamableHttp")).redirectErrorStream(true);
            builder.environment().put("PORT", Integer.toString(port));
            builder.environment().put("PARLEY_RECORD_AUTHORIZATION", authorizations.toString());
            Process process = builder.start();
            CompletableFuture<Boolean> listening = new CompletableFuture<>();
            Thread reader = new Thread(() -> {
                try (BufferedReader lines = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = lines.readLine()) != null) {
                        if (line.contains("listening on port")) {
                            listening.complete(true);
                        }
                    }
                } catch (IOException e) {
                    listening.completeExceptionally(e);
                }
                listening.complete(false);
            }, "everything-http-output");
            reader.setDaemon(true);
            reader.start();
            try {
                assertThat(listening.get(20, TimeUnit.SECONDS)).as("server-everything listens").isTrue();
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                process.destroyForcibly();
                throw new AssertionError("server-everything did not start", e);
            }
            return new HttpServer(process, "http://127.0.0.1:" + port + "/mcp");
        }

        @Override
        public void close() throws InterruptedException {
            process.destroy();
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
    }
}
