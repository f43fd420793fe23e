package dev.parley.chat.spring;

import dev.parley.chat.testing.BuildTools;
import dev.parley.chat.testing.NodeTests;
import java.util.Map;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The AG-UI endpoint driven by the official {@code @ag-ui/client}, 1.0 and 0.0.59 (what CopilotKit's React
 * packages pin), both installed from npm by the build ({@code src/test/agui/package-lock.json}): the client's
 * own verifier checks every response, and the scenarios of {@code src/test/agui/agui.test.mjs} check what it
 * made of them. The short heartbeat lets the server notice a client that aborted its request.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"parley.owner.mode=HEADER", "parley.web.heartbeat=100ms"})
class AgUiClientsNodeTest {
    @LocalServerPort
    int port;

    @ParameterizedTest
    @ValueSource(strings = {"agui-client-1", "agui-client-0059"})
    void theOfficialClientRunsEveryScenario(String client) throws Exception {
        BuildTools.assumePresent("npm");
        NodeTests.assertPasses("src/test/agui/agui.test.mjs", Map.of(
                "AGUI_CLIENT", client,
                "PARLEY_AGUI_URL", "http://localhost:" + port + "/api/chat/agui",
                "PARLEY_BASE_URL", "http://localhost:" + port + "/api/chat"));
    }
}
