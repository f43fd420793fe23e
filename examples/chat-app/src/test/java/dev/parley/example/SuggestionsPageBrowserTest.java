package dev.parley.example;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Follow-up suggestions on the chat page in headless Chromium: chips under the latest answer once its run ended,
 * still there after a reload, and a click sends the prompt. The example suggests after messages with "suggest".
 */
@SpringBootTest(classes = ExampleApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.datasource.url=jdbc:sqlite:target/suggestions-browser-test.db",
            "example.simulator.events-per-second=50"
        })
class SuggestionsPageBrowserTest {
    private static ChatPage page;

    @LocalServerPort
    int port;

    @BeforeAll
    static void startBrowser() throws IOException {
        Files.deleteIfExists(Paths.get("target/suggestions-browser-test.db"));
        page = ChatPage.start();
    }

    @AfterEach
    void printConsole() {
        page.printConsole();
    }

    @AfterAll
    static void stopBrowser() {
        if (page != null) {
            page.close();
        }
    }

    @SuppressWarnings("unchecked")
    private List<String> chips() {
        return (List<String>) page.js("const a = [...document.querySelectorAll('article.assistant')].pop();"
                + " return a ? [...a.querySelectorAll('.suggestions .suggestion')].map(c => c.innerText) : [];");
    }

    @SuppressWarnings("unchecked")
    private List<String> userTexts() {
        return (List<String>) page.js("return [...document.querySelectorAll('.user')].map(u => u.innerText)");
    }

    @Test
    void chipsFollowAnAnswerSurviveAReloadAndSendTheirPromptWhenClicked() throws IOException {
        page.open(port);
        page.send("What should I do next? suggest something");
        page.awaitLastAnswerStatus("COMPLETED");
        page.await(() -> chips().equals(List.of("Use the tools to plan a trip", "Tell me a joke")));
        assertThat(page.count("article.assistant .suggestions")).as("only under the latest answer").isEqualTo(1);
        page.screenshot("suggestions-01-chips");

        page.driver().navigate().refresh();
        page.await(() -> page.count("article.assistant") == 1);
        page.await(() -> chips().equals(List.of("Use the tools to plan a trip", "Tell me a joke")));

        page.click("article.assistant .suggestions .suggestion:first-child");
        page.await(() -> userTexts().size() == 2);
        assertThat(userTexts()).containsExactly("What should I do next? suggest something", "Use the tools to plan a trip");
        page.await(() -> page.count("article.assistant") == 2);
        assertThat(page.count(".suggestions")).as("no chips while the next answer is being written, nor on the older one")
                .isZero();
        page.awaitLastAnswerStatus("COMPLETED");
        assertThat(page.lastSummary()).contains("tool call");
        page.screenshot("suggestions-02-sent");
        assertThat(chips()).as("that answer's question asked for none").isEmpty();
    }
}
