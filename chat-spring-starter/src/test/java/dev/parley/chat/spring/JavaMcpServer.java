package dev.parley.chat.spring;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.json.jackson2.JacksonMcpJsonMapper;
import io.modelcontextprotocol.server.McpServer;
import io.modelcontextprotocol.server.McpServerFeatures.SyncToolSpecification;
import io.modelcontextprotocol.server.transport.StdioServerTransportProvider;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;

/**
 * A small MCP server over stdio on the official Java SDK, started as a child JVM by the starter's tests, so
 * they run a real server without Node.js. Its tools: {@code echo} (marked read-only: answers
 * {@code Echo: <message>}) and {@code erase} (not marked: answers {@code erased}).
 */
public final class JavaMcpServer {
    private JavaMcpServer() {
    }

    /** The command line that starts it: this JVM's java on the test classpath, without Logback (stdout is the protocol). */
    static List<String> commandLine(Path dir) throws IOException {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        String filtered = List.of(classpath.split(java.io.File.pathSeparator)).stream()
                .filter(entry -> !entry.contains("logback"))
                .collect(Collectors.joining(java.io.File.pathSeparator));
        Path args = dir.resolve("mcp-server.args");
        // an argument file: the test classpath is longer than one command-line argument may be
        Files.writeString(args, "-cp \"" + filtered + "\"\n");
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        return List.of(java, "@" + args, JavaMcpServer.class.getName());
    }

    public static void main(String[] args) throws InterruptedException {
        JacksonMcpJsonMapper json = new JacksonMcpJsonMapper(new ObjectMapper());
        Map<String, Object> schema = Map.of("type", "object", "properties",
                Map.of("message", Map.of("type", "string")));
        McpSchema.Tool echo = McpSchema.Tool.builder("echo", schema).description("Echoes the message")
                .annotations(new McpSchema.ToolAnnotations(null, true, false, true, false, null))
                .build();
        McpSchema.Tool erase = McpSchema.Tool.builder("erase", Map.of("type", "object")).description("Erases everything")
                .build();
        McpServer.sync(new StdioServerTransportProvider(json))
                .serverInfo("java-test-server", "1.0")
                .capabilities(McpSchema.ServerCapabilities.builder().tools(false).build())
                .tools(new SyncToolSpecification(echo, (exchange, request) -> McpSchema.CallToolResult.builder()
                                .addTextContent("Echo: " + request.arguments().get("message")).build()),
                        new SyncToolSpecification(erase, (exchange, request) -> McpSchema.CallToolResult.builder()
                                .addTextContent("erased").build()))
                .build();
        new CountDownLatch(1).await();
    }
}
