package dev.parley.example;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.testing.openai.Sse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * Files in the chat page, in headless Chromium, with the app on a model (LangChain4j's OpenAI client against an
 * OpenAI-compatible server on loopback): an image dropped on the page and a PDF picked with the attach button
 * upload with the message, show as a thumbnail and a chip, reach the model in its request, and are still there
 * after a reload. A file type that may not be attached is refused in the page, without an upload.
 */
@SpringBootTest(classes = ExampleApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"parley.example.runtime=openai", "parley.example.openai.model=vision-test",
            "spring.datasource.url=jdbc:sqlite:target/attachments-browser-test.db"})
class AttachmentsPageBrowserTest {
    private static final WireMockServer MODEL = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));
    private static ChatPage page;

    static {
        MODEL.start();
    }

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void server(DynamicPropertyRegistry registry) {
        registry.add("parley.example.openai.base-url", () -> "http://127.0.0.1:" + MODEL.port() + "/v1");
    }

    @BeforeAll
    static void startBrowser() throws IOException {
        Files.deleteIfExists(Paths.get("target/attachments-browser-test.db"));
        page = ChatPage.start();
    }

    @AfterEach
    void printConsole(org.junit.jupiter.api.TestInfo test) throws IOException {
        page.screenshot("attachments-" + test.getTestMethod().map(java.lang.reflect.Method::getName).orElse("test"));
        page.printConsole();
    }

    @AfterAll
    static void stop() {
        if (page != null) {
            page.close();
        }
        MODEL.stop();
    }

    @Test
    void anImageDroppedAndAPdfAttachedGoWithTheMessageToTheModelAndStayAfterAReload() throws IOException {
        MODEL.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream")
                .withBody(Sse.stream().text("A red rectangle, ", "and a one-page report.").finish("stop")
                        .usage(90, 8).done())));
        byte[] png = ChatPage.redPng(24, 16);
        byte[] pdf = "%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n"
                .getBytes(StandardCharsets.US_ASCII);
        Path pdfFile = Files.createTempDirectory("parley-page-files").resolve("report.pdf");
        Files.write(pdfFile, pdf);

        page.open(port);
        page.await(() -> driver().findElement(By.id("attach")).isDisplayed());

        assertThat(page.dropFile("red.png", "image/png", png)).as("the hint shows while dragging; the drop is taken")
                .containsExactly(true, false, false);
        page.waitFor(".composer-file[data-state='done'] img.thumb");
        page.js("document.getElementById('file-input').hidden = false");
        driver().findElement(By.id("file-input")).sendKeys(pdfFile.toString());
        page.js("document.getElementById('file-input').hidden = true");
        page.await(() -> page.count(".composer-file[data-state='done']") == 2);
        assertThat(page.text(".attachments-tray")).contains("red.png", "report.pdf");

        page.dropFile("page.html", "text/html", "<html><script>alert(1)</script></html>".getBytes(StandardCharsets.UTF_8));
        page.await(() -> driver().findElement(By.id("error-bar")).isDisplayed());
        assertThat(page.text("#error-bar")).contains("page.html", "cannot be attached");
        assertThat(page.count(".composer-file")).as("refused in the page, never uploaded").isEqualTo(2);
        page.screenshot("attachments-tray");

        page.send("What is in these files?");
        page.awaitLastAnswerStatus("COMPLETED");
        assertThat(page.lastAnswerText()).isEqualTo("A red rectangle, and a one-page report.");
        assertThat(page.count(".attachments-tray .composer-file")).as("the tray empties once sent").isZero();
        assertSentMessageShowsItsFiles();

        JsonNode request = ChatJson.shared().readTree(MODEL.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions")))
                .get(0).getBodyAsString());
        JsonNode question = request.get("messages").get(request.get("messages").size() - 1);
        List<String> parts = new ArrayList<>();
        question.get("content").forEach(part -> parts.add(part.get("type").asText()));
        assertThat(parts).contains("text", "image_url", "file");
        assertThat(question.toString()).contains("What is in these files?")
                .contains("data:image/png;base64," + Base64.getEncoder().encodeToString(png))
                .contains(Base64.getEncoder().encodeToString(pdf));

        driver().navigate().refresh();
        page.await(() -> page.count(".user-turn .message-files") == 1);
        assertSentMessageShowsItsFiles();
        page.screenshot("attachments-sent");
    }

    /** The person's message shows the image as a thumbnail loaded from the server, and the PDF as a chip. */
    private void assertSentMessageShowsItsFiles() {
        page.await(() -> Boolean.TRUE.equals(page.js("const img = document.querySelector('.user-turn .message-files img.thumb');"
                + " return !!img && img.complete && img.naturalWidth === 24;")));
        assertThat(page.text(".user-turn .message-file.chip")).contains("report.pdf");
        String href = (String) page.js("return document.querySelector('.user-turn .message-file.chip').href");
        assertThat(href).contains("/api/chat/attachments/");
    }

    private static org.openqa.selenium.chrome.ChromeDriver driver() {
        return page.driver();
    }
}
