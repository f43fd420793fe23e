package dev.parley.chat.mcp;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.HostActionScope;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** Servers that cannot be reached offer nothing and hold nothing up; no Node.js needed. */
class McpUnreachableServersTest {
    private static final HostActionScope RUN = new HostActionScope("alice", "t1", "r1");

    @Test
    void aStdioServerWhoseCommandIsMissingOffersNoToolsAndIsTriedAgainInTheBackground() {
        McpServer missing = McpServer.stdio("missing", "/nonexistent/mcp-server")
                .withConnectTimeout(Duration.ofSeconds(2));
        try (McpTools tools = McpTools.builder().server(missing).build()) {
            assertThat(tools.actionsFor(RUN)).isEmpty();
            long start = System.nanoTime();
            for (int i = 0; i < 20; i++) {
                assertThat(tools.actionsFor(RUN)).isEmpty();
            }
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("later runs do not wait for a connect")
                    .isLessThan(Duration.ofMillis(500));
        }
    }

    @Test
    void anHttpServerNobodyListensOnOffersNoToolsFromTheStart() {
        McpServer nowhere = McpServer.http("nowhere", "http://127.0.0.1:9/mcp").withConnectTimeout(Duration.ofSeconds(2));
        try (McpTools tools = McpTools.builder().server(nowhere).connectAtStart(true).build()) {
            assertThat(tools.actionsFor(RUN)).isEmpty();
        }
    }
}
