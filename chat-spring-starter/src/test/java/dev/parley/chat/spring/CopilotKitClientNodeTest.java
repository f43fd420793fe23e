package dev.parley.chat.spring;

import dev.parley.chat.testing.BuildTools;
import dev.parley.chat.testing.NodeTests;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The CopilotKit endpoint driven by CopilotKit's own client core, {@code @copilotkit/core} 1.74.0 (what
 * {@code @copilotkit/react-core} 1.74.0 runs in the page), headless and with no Node runtime in between,
 * installed from npm by the build ({@code src/test/copilotkit/package-lock.json}). The scenarios of
 * {@code src/test/copilotkit/copilotkit.test.mjs}: turns on both transports, reloads (connect) on a thread at
 * rest, mid-answer and with a pending question, stop, and threads that are not the page's. The owner header
 * is trusted here, as behind a proxy that sets it.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"parley.owner.mode=HEADER", "parley.web.copilotkit.trust-owner-header=true"})
class CopilotKitClientNodeTest {
    @LocalServerPort
    int port;

    @Test
    void copilotKitsOwnClientRunsEveryScenario() throws Exception {
        BuildTools.assumePresent("npm");
        NodeTests.assertPasses("src/test/copilotkit/copilotkit.test.mjs",
                Map.of("PARLEY_COPILOTKIT_URL", "http://localhost:" + port + "/api/chat/copilotkit"));
    }
}
