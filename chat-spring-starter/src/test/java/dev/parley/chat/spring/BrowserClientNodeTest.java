package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.testing.NodeTests;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The browser client's JavaScript, run by Node's test runner inside {@code mvn verify}: the reducer
 * against chat-core's vectors, and the client against this live server.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = "parley.owner.mode=HEADER")
class BrowserClientNodeTest {
    @LocalServerPort
    int port;

    @Test
    void theReducerPassesTheCoreVectors() throws Exception {
        NodeTests.assertPasses("src/test/js/reducer.test.mjs", Map.of());
    }

    @Test
    void theClientWorksAgainstALiveServer() throws Exception {
        NodeTests.assertPasses("src/test/js/client.test.mjs", Map.of("PARLEY_BASE_URL", "http://localhost:" + port + "/api/chat"));
    }

    @Test
    void theClientSendsSafelyEditsSearchesAndExportsAgainstALiveServer() throws Exception {
        NodeTests.assertPasses("src/test/js/conversations.test.mjs",
                Map.of("PARLEY_BASE_URL", "http://localhost:" + port + "/api/chat"));
    }

    @Test
    void theClientScriptsAreServedByTheStarter() {
        HttpSupport http = new HttpSupport(port);
        HttpSupport.Reply client = http.get(null, "/parley/parley-client.js");
        assertThat(client.status()).isEqualTo(200);
        assertThat(client.contentType()).contains("javascript");
        assertThat(client.body()).contains("export class ParleyClient");
        assertThat(http.get(null, "/parley/reducer.js").body()).contains("export class RunReducer");
    }
}
