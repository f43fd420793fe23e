package dev.parley.example;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.hermes.HermesApiStub;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestMethodOrder;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The example app as a new user runs it against Hermes Agent 0.19's own API server
 * ({@code --parley.hermes.transport=API_SERVER}): the page, the starter, the engine and the SQLite store
 * over real HTTP, and {@link HermesApiStub} (chat-adapter-hermes' stand-in, which sends and accepts what
 * Hermes 0.19's server does, docs/hermes-bridge-protocol.md Part 2) in place of Hermes. 0.19 loads nothing
 * from {@code session_id}, so memory across turns rests on the conversation Parley sends with each turn.
 */
@SpringBootTest(classes = ExampleApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.datasource.url=jdbc:sqlite:target/hermes-api-page-test.db",
            "parley.hermes.transport=API_SERVER"
        })
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HermesApiServerPageTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** plain.sse's answer, which the stand-in gives to every turn but the approval one. */
    private static final String ANSWER = "Let me look at the files.";

    private static HermesApiStub hermes;
    private static ChatPage page;

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void hermes(DynamicPropertyRegistry registry) throws IOException {
        Files.deleteIfExists(Paths.get("target/hermes-api-page-test.db"));
        hermes = new HermesApiStub(HermesApiStub.Line.V0_19);
        hermes.scriptBy(body -> body.path("input").asText().contains("build directory") ? "approval.sse" : "plain.sse");
        registry.add("parley.hermes.base-url", hermes::baseUrl);
        registry.add("parley.hermes.token", () -> HermesApiStub.KEY);
    }

    @BeforeAll
    static void startBrowser() throws IOException {
        page = ChatPage.start();
    }

    @AfterEach
    void printConsole(TestInfo test) throws IOException {
        page.screenshot("hermes-api-after-" + test.getTestMethod().map(java.lang.reflect.Method::getName).orElse("test"));
        page.printConsole();
    }

    @AfterAll
    static void stop() throws IOException {
        if (page != null) {
            page.close();
        }
        if (hermes != null) {
            hermes.close();
        }
    }

    /** The bodies of {@code POST /v1/runs}, in order. */
    private static List<JsonNode> runStarts() throws IOException {
        List<JsonNode> starts = new ArrayList<>();
        List<String> requests = hermes.requests();
        List<String> bodies = hermes.bodies();
        for (int i = 0; i < requests.size(); i++) {
            if (requests.get(i).startsWith("POST /v1/runs ")) {
                starts.add(JSON.readTree(bodies.get(i)));
            }
        }
        return starts;
    }

    private static List<String> history(JsonNode start) {
        List<String> turns = new ArrayList<>();
        start.path("conversation_history").forEach(m -> turns.add(m.path("role").asText() + ": " + m.path("content").asText()));
        return turns;
    }

    @Test
    @Order(1)
    void threeTurnsInOneThreadEachCarryTheTurnsBefore() throws IOException {
        page.open(port);
        assertThat(page.text("#runtime-badge")).isEqualTo("Hermes");
        for (String message : List.of("My name is Ada.", "I live in Lisbon.", "Where do I live?")) {
            page.send(message);
            page.awaitLastAnswerStatus("COMPLETED");
            assertThat(page.lastAnswerText()).isEqualTo(ANSWER);
        }

        List<JsonNode> starts = runStarts();
        assertThat(starts).hasSize(3);
        assertThat(starts).extracting(s -> s.path("input").asText())
                .containsExactly("My name is Ada.", "I live in Lisbon.", "Where do I live?");
        assertThat(history(starts.get(0))).isEmpty();
        assertThat(history(starts.get(1))).containsExactly("user: My name is Ada.", "assistant: " + ANSWER);
        assertThat(history(starts.get(2))).containsExactly("user: My name is Ada.", "assistant: " + ANSWER,
                "user: I live in Lisbon.", "assistant: " + ANSWER);
        page.screenshot("hermes-api-01-three-turns");
    }

    @Test
    @Order(2)
    void anApprovalCardOffersHermesChoicesAndADenialReachesHermes() throws IOException {
        page.send("Please clean the build directory");
        page.waitFor(".approval-card");
        assertThat(page.text(".approval-card .approval-title")).contains("terminal");
        assertThat((String) page.js("return document.querySelector('.approval-card textarea.approval-args, .approval-card .approval-args').value"
                + " ?? document.querySelector('.approval-card .approval-args').innerText"))
                .contains("rm -rf build/");
        assertThat(page.js("return [...document.querySelectorAll('.approval-card [data-action=decide]')].map(b => b.innerText)"))
                .as("0.19's choices once, session, always and deny").asList()
                .contains("Allow once", "Deny").hasSize(4);
        page.screenshot("hermes-api-02-approval-card");

        page.click(".approval-card [data-decision='deny']");
        page.awaitLastAnswerStatus("COMPLETED");
        assertThat(hermes.decisions()).containsExactly("deny");
        assertThat(page.count(".approval-card")).isZero();
        page.await(() -> page.lastSummary().contains("Denied"));
        assertThat(history(runStarts().get(3))).as("the fourth turn still carries the three before").hasSize(6);
    }
}
