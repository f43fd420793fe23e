package dev.parley.example;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.json.ChatJson;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The CopilotKit example ({@code examples/copilotkit-app}: CopilotKit's stock React chat,
 * {@code @copilotkit/react-core} 1.74.0's v2 {@code CopilotKitProvider} and {@code CopilotChat} with the example's
 * thread list; and the v1 chat) in headless Chromium, straight onto the example host's CopilotKit endpoint with no
 * Node runtime in between, from another origin (CORS with credentials). The example adds a question card
 * ({@code useInterrupt}) and a line for a failed run ({@code onError}), as an app does.
 */
@SpringBootTest(classes = ExampleApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.datasource.url=jdbc:sqlite:target/copilotkit-page-test-${random.uuid}.db",
            "example.simulator.events-per-second=200"
        })
class CopilotKitPageBrowserTest {
    /** The example's own server, on another port than the host: another origin. */
    private static final CopilotKitBrowser copilotKit = CopilotKitBrowser.serveExample();
    private static ChatPage browser;

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void pageOrigin(DynamicPropertyRegistry registry) {
        registry.add("parley.web.copilotkit.allowed-origins", copilotKit::origin);
    }

    @BeforeAll
    static void startBrowser() throws IOException {
        copilotKit.startBrowser();
        browser = copilotKit.page();
    }

    @AfterEach
    void printConsole() {
        if (browser != null) {
            browser.printConsole();
        }
    }

    @AfterAll
    static void stopEverything() {
        copilotKit.close();
    }

    private String host() {
        return "http://localhost:" + port;
    }

    private void open(String threadId) {
        copilotKit.open(CopilotKitBrowser.V2, host(), threadId);
    }

    private void send(String text) {
        copilotKit.send(text);
    }

    private List<String> awaitConversation(int answers) {
        return copilotKit.awaitConversation(answers);
    }

    private int status(String path) throws IOException, InterruptedException {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(host() + path)).build(),
                HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /** The thread's newest answer as the host stored it. */
    private JsonNode storedAnswer(String threadId) throws IOException, InterruptedException {
        String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(host()
                + "/api/chat/sessions/" + threadId)).build(), HttpResponse.BodyHandlers.ofString()).body();
        JsonNode answer = null;
        for (JsonNode message : ChatJson.shared().readTree(body).get("messages")) {
            if (message.get("type").asText().equals("assistant")) {
                answer = message;
            }
        }
        return answer;
    }

    private void awaitStored(String threadId, String status) {
        browser.waiter().until(driver -> {
            try {
                JsonNode answer = storedAnswer(threadId);
                return answer != null && answer.get("status").asText().equals(status);
            } catch (IOException | InterruptedException e) {
                return false;
            }
        });
    }

    /** The messages of the v1 chat once it shows {@code answers} whole answers (the simulator's end in the last). */
    @SuppressWarnings("unchecked")
    private List<String> awaitV1Conversation(int answers) {
        String messages = "[...document.querySelectorAll('.copilotKitUserMessage, .copilotKitAssistantMessage')]";
        browser.waiter().until(driver -> browser.count(".copilotKitAssistantMessage") == answers
                && String.valueOf(browser.js("const m = " + messages + "; return m.length ? m[m.length - 1].innerText"
                        + " : ''")).contains("other scenarios"));
        return (List<String>) browser.js("return " + messages + ".map(m => (m.classList.contains("
                + "'copilotKitUserMessage') ? 'user: ' : 'assistant: ') + m.innerText.trim())");
    }

    /**
     * The v1 chat ({@code <CopilotKit>}, which renders the v2 provider, with {@code @copilotkit/react-ui}'s
     * {@code CopilotChat}) on the same endpoint: two turns, and a reload that brings them back.
     */
    @Test
    void theV1ChatTakesTwoTurnsAndAReloadBringsThemBack() {
        String threadId = UUID.randomUUID().toString();
        copilotKit.open(CopilotKitBrowser.V1, host(), threadId);
        send("hello");
        awaitV1Conversation(1);
        send("and again");
        List<String> twoTurns = awaitV1Conversation(2);
        assertThat(twoTurns).hasSize(4);
        assertThat(twoTurns.get(0)).isEqualTo("user: hello");
        assertThat(twoTurns.get(2)).isEqualTo("user: and again");

        copilotKit.reload();
        assertThat(awaitV1Conversation(2)).as("the thread back after a reload").isEqualTo(twoTurns);
    }

    /** A page reloaded while the answer streams shows it once, followed to its end, the same as stored. */
    @Test
    void aReloadMidAnswerShowsTheAnswerOnceToItsEnd() throws Exception {
        String threadId = UUID.randomUUID().toString();
        open(threadId);
        send("slow please");
        copilotKit.awaitAnswerStreaming();
        copilotKit.reload();
        List<String> conversation = awaitConversation(1);
        assertThat(conversation).hasSize(2);
        assertThat(storedAnswer(threadId).get("status").asText()).isEqualTo("COMPLETED");
        String answer = copilotKit.answerOnPage();
        assertThat(answer.split("Simulated answer", -1)).as("the answer once: " + answer).hasSize(2);
        assertThat(answer).as("to its end").endsWith("every word is scripted.");
    }

    /** The stop button stops the run; the partial answer stays, on the page and after a reload. */
    @Test
    void stopKeepsThePartialAnswer() throws Exception {
        String threadId = UUID.randomUUID().toString();
        open(threadId);
        send("slow please");
        copilotKit.awaitAnswerStreaming();
        copilotKit.clickStop();
        awaitConversation(1);
        awaitStored(threadId, "CANCELLED");
        String partial = copilotKit.answerOnPage();
        assertThat(partial).isNotBlank();
        copilotKit.reload();
        awaitConversation(1);
        assertThat(copilotKit.answerOnPage()).as("the partial answer kept").isEqualTo(partial);
    }

    /**
     * A run that fails ends with {@code RUN_ERROR}. The stock chat shows nothing of it by itself (it reports it to
     * {@code onError}, code {@code agent_run_error_event}); the page's line shows the runtime's message. The
     * partial answer is stored FAILED, and a reload shows it as the thread holds it.
     */
    @Test
    void aFailedRunIsShownThroughOnError() throws Exception {
        String threadId = UUID.randomUUID().toString();
        open(threadId);
        send("please fail");
        assertThat(browser.waitFor("[data-testid=parley-error]").getText())
                .isEqualTo("The simulated agent failed on purpose");
        browser.waiter().until(driver -> browser.count("[data-copilot-running=true]") == 0);
        JsonNode stored = storedAnswer(threadId);
        assertThat(stored.get("status").asText()).isEqualTo("FAILED");
        assertThat(stored.get("error").get("code").asText()).isEqualTo("AGENT_ERROR");
        copilotKit.reload();
        assertThat(awaitConversation(1)).containsExactly("user: please fail", "assistant: Let me look that up");
        assertThat(browser.count("[data-testid=parley-error]")).as("a reload shows no error").isZero();
    }

    /** A question the agent asks survives a reload, and choosing an answer there resumes the run. */
    @Test
    void aPendingQuestionSurvivesAReloadAndItsAnswerResumesTheRun() throws Exception {
        String threadId = UUID.randomUUID().toString();
        open(threadId);
        send("clarify the format");
        browser.waitFor("[data-testid=parley-question] button[data-choice]");
        browser.driver().navigate().refresh();
        browser.waitFor("[data-testid=parley-question] button[data-choice='A table']").click();
        browser.waiter().until(driver -> browser.count("[data-testid=parley-question]") == 0
                && browser.count("[data-copilot-running=true]") == 0
                && String.valueOf(browser.js("return document.body.innerText")).contains("You chose A table"));
        assertThat(storedAnswer(threadId).get("text").asText()).contains("You chose **A table**");
    }

    @Test
    void twoTurnsAReloadThatBringsThemBackAndATurnThatContinuesThem() throws Exception {
        String threadId = UUID.randomUUID().toString();
        open(threadId);
        send("hello");
        assertThat(awaitConversation(1)).hasSize(2);
        send("and again");
        List<String> twoTurns = awaitConversation(2);
        assertThat(twoTurns).hasSize(4);
        assertThat(twoTurns.get(0)).isEqualTo("user: hello");
        assertThat(twoTurns.get(3)).startsWith("assistant: ").hasSizeGreaterThan("assistant: ".length());

        copilotKit.reload();
        assertThat(awaitConversation(2)).as("the thread back after a reload").isEqualTo(twoTurns);

        send("once more");
        List<String> threeTurns = awaitConversation(3);
        assertThat(threeTurns.subList(0, 4)).isEqualTo(twoTurns);
        assertThat(threeTurns.get(4)).isEqualTo("user: once more");
        assertThat(browser.count("[data-testid=copilot-error-banner]")).isZero();
        assertThat(status("/api/chat/sessions/" + threadId)).isEqualTo(200);
    }

    @Test
    void aNewThreadOpensEmptyAndIsCreatedByItsFirstMessageOnly() throws Exception {
        String threadId = UUID.randomUUID().toString();
        open(threadId);
        Thread.sleep(1_000);
        assertThat(browser.count("[data-testid=copilot-user-message], [data-testid=copilot-assistant-message]"))
                .isZero();
        assertThat(status("/api/chat/sessions/" + threadId)).as("opening the page created nothing").isEqualTo(404);
    }

    /**
     * The v1 chat's stop button (react-ui's send button while a run goes on) stops the run through the endpoint;
     * the partial answer stays, and a reload shows it as stored.
     */
    @Test
    void theV1ChatsStopKeepsThePartialAnswer() throws Exception {
        String threadId = UUID.randomUUID().toString();
        copilotKit.open(CopilotKitBrowser.V1, host(), threadId);
        send("slow please");
        browser.waiter().until(driver -> !String.valueOf(browser.js("const m = document.querySelector("
                + "'.copilotKitAssistantMessage'); return m ? m.innerText : ''")).isBlank());
        browser.waitFor("[data-test-id=copilot-chat-request-in-progress]").click();
        awaitStored(threadId, "CANCELLED");
        String stored = storedAnswer(threadId).get("text").asText();
        assertThat(stored).as("cut before the answer's end (how far it got depends on the machine's speed)")
                .isNotBlank().doesNotContain("every word is scripted.");
        copilotKit.reload();
        browser.waiter().until(driver -> browser.count(".copilotKitAssistantMessage") == 1);
        String shown = String.valueOf(browser.js("return document.querySelector('.copilotKitAssistantMessage')"
                + ".innerText")).strip();
        assertThat(shown).as("the partial answer kept").isNotBlank().doesNotContain("every word is scripted.");
    }

    /**
     * The example's thread list (CopilotKit's {@code useThreads} on the endpoint's {@code GET /threads}): the
     * conversations had show there, "New chat" opens an empty one, and a click on an earlier one brings it back.
     */
    @Test
    void theThreadListShowsTheConversationsAndOpensOne() {
        String first = UUID.randomUUID().toString();
        open(first);
        send("hello");
        List<String> firstConversation = awaitConversation(1);
        browser.waitFor("[data-testid=parley-threads] button[data-thread='" + first + "'][aria-current=page]");

        browser.waitFor("[data-testid=parley-new-chat]").click();
        browser.waiter().until(driver -> !String.valueOf(browser.js("return location.search")).contains(first)
                && browser.count("[data-testid=copilot-user-message]") == 0);
        String second = String.valueOf(browser.js("return new URLSearchParams(location.search).get('thread')"));
        copilotKit.awaitReady();
        send("and another thing");
        awaitConversation(1);
        browser.waitFor("[data-testid=parley-threads] button[data-thread='" + second + "'][aria-current=page]");
        @SuppressWarnings("unchecked")
        List<String> listed = (List<String>) browser.js("return [...document.querySelectorAll("
                + "'[data-testid=parley-threads] button[data-thread]')].map(b => b.dataset.thread)");
        assertThat(listed).as("newest first").containsSubsequence(second, first);

        browser.waitFor("[data-testid=parley-threads] button[data-thread='" + first + "']").click();
        browser.waiter().until(driver -> String.valueOf(browser.js("return location.search")).contains(first));
        assertThat(awaitConversation(1)).as("the earlier conversation back").isEqualTo(firstConversation);
        copilotKit.reload();
        assertThat(awaitConversation(1)).as("and after a reload, from the address").isEqualTo(firstConversation);
    }

    /**
     * The v1 chat shows a pending question through {@code useLangGraphInterrupt}; it survives a reload, and the
     * choice made there resumes the run.
     */
    @Test
    void theV1ChatsPendingQuestionSurvivesAReloadAndItsAnswerResumesTheRun() throws Exception {
        String threadId = UUID.randomUUID().toString();
        copilotKit.open(CopilotKitBrowser.V1, host(), threadId);
        send("clarify the format");
        browser.waitFor("[data-testid=parley-question] button[data-choice]");
        browser.driver().navigate().refresh();
        browser.waitFor("[data-testid=parley-question] button[data-choice='A table']").click();
        browser.waiter().until(driver -> browser.count("[data-testid=parley-question]") == 0
                && String.valueOf(browser.js("return document.body.innerText")).contains("You chose A table"));
        assertThat(storedAnswer(threadId).get("text").asText()).contains("You chose **A table**");
    }
}
