package dev.parley.example.copilotkit;

import dev.parley.chat.testing.BuildTools;
import dev.parley.chat.testing.NodeTests;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The runner ({@code index.js}) inside the real {@code @copilotkit/runtime} 1.75.0, served over HTTP on loopback
 * in its own Node processes and driven by CopilotKit's own client core ({@code @copilotkit/core} 1.74.0), against
 * this Parley host: {@code test/runner.test.mjs}. Installed from npm by the build ({@code package-lock.json}).
 */
@SpringBootTest(classes = RunnerHostApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
class ParleyAgentRunnerNodeTest {
    @LocalServerPort
    int port;

    @Test
    void theRealRuntimeKeepsItsThreadsInParley() throws Exception {
        BuildTools.assumePresent("npm");
        NodeTests.assertPasses("test/runner.test.mjs",
                Map.of("PARLEY_URL", "http://localhost:" + port + "/api/chat"));
    }
}
