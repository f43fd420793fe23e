package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
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
        assertNodePasses("src/test/js/reducer.test.mjs", Map.of());
    }

    @Test
    void theClientWorksAgainstALiveServer() throws Exception {
        assertNodePasses("src/test/js/client.test.mjs", Map.of("PARLEY_BASE_URL", "http://localhost:" + port + "/api/chat"));
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

    private static void assertNodePasses(String script, Map<String, String> env) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(List.of("node", "--test", "--test-reporter=spec", script))
                .directory(new File("."))
                .redirectErrorStream(true);
        builder.environment().putAll(env);
        Process node;
        try {
            node = builder.start();
        } catch (IOException e) {
            throw new AssertionError("Node.js is needed to test the browser client (node --test); install Node 20+", e);
        }
        byte[] output = node.getInputStream().readAllBytes();
        assertThat(node.waitFor(120, TimeUnit.SECONDS)).isTrue();
        String report = new String(output, StandardCharsets.UTF_8);
        System.out.println(report);
        assertThat(node.exitValue()).as(report).isZero();
        assertThat(report).containsPattern("fail 0\\b").doesNotContainPattern("pass 0\\b");
    }
}
