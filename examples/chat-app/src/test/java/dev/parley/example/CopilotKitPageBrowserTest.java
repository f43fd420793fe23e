package dev.parley.example;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.testing.BuildTools;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * CopilotKit's stock React chat ({@code @copilotkit/react-core} 1.74.0, v2 {@code CopilotKitProvider} and
 * {@code CopilotChat}; and the v1 chat once) in headless Chromium, straight onto the example host's CopilotKit endpoint with no Node
 * runtime in between. The page (bundled by the build into {@code target/copilotkit-page}) is served from another
 * origin than the host, so every call goes through CORS with credentials, as for a front end hosted apart. The
 * page adds a question card ({@code useInterrupt}) and a line for a failed run ({@code onError}), as an app
 * does.
 */
@SpringBootTest(classes = ExampleApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.datasource.url=jdbc:sqlite:target/copilotkit-page-test-${random.uuid}.db",
            "example.simulator.events-per-second=200"
        })
class CopilotKitPageBrowserTest {
    private static final Path PAGE = Paths.get("target/copilotkit-page");
    private static final Map<String, String> TYPES = Map.of("html", "text/html; charset=utf-8",
            "js", "text/javascript; charset=utf-8", "css", "text/css; charset=utf-8", "woff2", "font/woff2",
            "woff", "font/woff", "ttf", "font/ttf");
    private static HttpServer pageServer;
    private static ChatPage browser;

    @LocalServerPort
    int port;

    /** The page's own server, on another port than the host: another origin. */
    @DynamicPropertySource
    static void pageOrigin(DynamicPropertyRegistry registry) throws IOException {
        pageServer = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        pageServer.createContext("/", exchange -> {
            Path file = PAGE.resolve(exchange.getRequestURI().getPath().substring(1)).normalize();
            boolean found = file.startsWith(PAGE) && Files.isRegularFile(file);
            byte[] body = found ? Files.readAllBytes(file) : new byte[0];
            String name = file.getFileName() == null ? "" : file.getFileName().toString();
            exchange.getResponseHeaders().set("Content-Type",
                    TYPES.getOrDefault(name.substring(name.lastIndexOf('.') + 1), "application/octet-stream"));
            exchange.sendResponseHeaders(found ? 200 : 404, found ? body.length : -1);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        pageServer.start();
        registry.add("parley.web.copilotkit.allowed-origins", () -> pageOrigin());
    }

    private static String pageOrigin() {
        return "http://localhost:" + pageServer.getAddress().getPort();
    }

    @BeforeAll
    static void startBrowser() throws IOException {
        BuildTools.assumePresent("npm");
        Assumptions.assumeTrue(Files.isRegularFile(PAGE.resolve("page.js")),
                "SKIPPED: the CopilotKit page was not built (target/copilotkit-page); the build bundles it where npm is");
        browser = ChatPage.start();
    }

    @AfterEach
    void printConsole() {
        if (browser != null) {
            browser.printConsole();
        }
    }

    @AfterAll
    static void stopEverything() {
        if (browser != null) {
            browser.close();
        }
        if (pageServer != null) {
            pageServer.stop(0);
        }
    }

    private void open(String threadId) {
        open("index.html", threadId);
    }

    /** Opens {@code page} (the v2 chat's or the v1 chat's) on the thread, once its chat reached the runtime. */
    private void open(String page, String threadId) {
        String runtimeUrl = "http://localhost:" + port + "/api/chat/copilotkit";
        browser.driver().get(pageOrigin() + "/" + page + "?thread=" + threadId + "&runtimeUrl="
                + URLEncoder.encode(runtimeUrl, StandardCharsets.UTF_8));
        awaitReady();
    }

    /** Waits for the page's chat to have reached the runtime: a message typed before that is lost. */
    private void awaitReady() {
        browser.waitFor("[data-testid=copilot-chat-textarea]");
        browser.waiter().until(driver -> Boolean.TRUE.equals(browser.js(
                "return window.parleyCopilotKit?.runtimeConnectionStatus === 'connected'")));
    }

    private void send(String text) {
        browser.driver().findElement(By.cssSelector("[data-testid=copilot-chat-textarea]")).sendKeys(text, Keys.ENTER);
    }

    /** The texts of the user and assistant messages on the page, once {@code answers} answers stand finished. */
    @SuppressWarnings("unchecked")
    private List<String> awaitConversation(int answers) {
        browser.waiter().until(driver -> browser.count("[data-testid=copilot-assistant-message]") == answers
                && browser.count("[data-copilot-running=true]") == 0);
        return (List<String>) browser.js("return [...document.querySelectorAll("
                + "'[data-testid=copilot-user-message], [data-testid=copilot-assistant-message]')]"
                + ".map(m => (m.getAttribute('data-testid').includes('user') ? 'user: ' : 'assistant: ')"
                + " + m.innerText.trim())");
    }

    private int status(String path) throws IOException, InterruptedException {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .build(), HttpResponse.BodyHandlers.discarding()).statusCode();
    }

    /** The thread's newest answer as the host stored it. */
    private JsonNode storedAnswer(String threadId) throws IOException, InterruptedException {
        String body = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://localhost:" + port
                + "/api/chat/sessions/" + threadId)).build(), HttpResponse.BodyHandlers.ofString()).body();
        JsonNode answer = null;
        for (JsonNode message : ChatJson.shared().readTree(body).get("messages")) {
            if (message.get("type").asText().equals("assistant")) {
                answer = message;
            }
        }
        return answer;
    }

    /** Waits for the answer on the page to show some text while its run goes on. */
    private void awaitAnswerStreaming() {
        browser.waiter().until(driver -> browser.count("[data-copilot-running=true]") == 1
                && browser.count("[data-testid=copilot-assistant-message]") == 1
                && !String.valueOf(browser.js("return document.querySelector("
                        + "'[data-testid=copilot-assistant-message]').innerText")).isBlank());
    }

    private String answerOnPage() {
        return String.valueOf(browser.js("return document.querySelector('[data-testid=copilot-assistant-message]')"
                + ".innerText")).strip();
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
        open("index-v1.html", threadId);
        send("hello");
        awaitV1Conversation(1);
        send("and again");
        List<String> twoTurns = awaitV1Conversation(2);
        assertThat(twoTurns).hasSize(4);
        assertThat(twoTurns.get(0)).isEqualTo("user: hello");
        assertThat(twoTurns.get(2)).isEqualTo("user: and again");

        browser.driver().navigate().refresh();
        awaitReady();
        assertThat(awaitV1Conversation(2)).as("the thread back after a reload").isEqualTo(twoTurns);
    }

    /** A page reloaded while the answer streams shows it once, followed to its end, the same as stored. */
    @Test
    void aReloadMidAnswerShowsTheAnswerOnceToItsEnd() throws Exception {
        String threadId = UUID.randomUUID().toString();
        open(threadId);
        send("slow please");
        awaitAnswerStreaming();
        browser.driver().navigate().refresh();
        awaitReady();
        List<String> conversation = awaitConversation(1);
        assertThat(conversation).hasSize(2);
        assertThat(storedAnswer(threadId).get("status").asText()).isEqualTo("COMPLETED");
        String answer = answerOnPage();
        assertThat(answer.split("Simulated answer", -1)).as("the answer once: " + answer).hasSize(2);
        assertThat(answer).as("to its end").endsWith("every word is scripted.");
    }

    /** The stop button stops the run; the partial answer stays, on the page and after a reload. */
    @Test
    void stopKeepsThePartialAnswer() throws Exception {
        String threadId = UUID.randomUUID().toString();
        open(threadId);
        send("slow please");
        awaitAnswerStreaming();
        browser.driver().findElement(By.cssSelector("[data-testid=copilot-send-button]")).click();
        awaitConversation(1);
        browser.waiter().until(driver -> {
            try {
                return storedAnswer(threadId).get("status").asText().equals("CANCELLED");
            } catch (IOException | InterruptedException e) {
                return false;
            }
        });
        String partial = answerOnPage();
        assertThat(partial).isNotBlank();
        browser.driver().navigate().refresh();
        awaitReady();
        awaitConversation(1);
        assertThat(answerOnPage()).as("the partial answer kept").isEqualTo(partial);
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
        browser.driver().navigate().refresh();
        awaitReady();
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

        browser.driver().navigate().refresh();
        awaitReady();
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
}
