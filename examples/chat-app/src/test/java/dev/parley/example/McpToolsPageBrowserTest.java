package dev.parley.example;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.testing.BuildTools;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.WebElement;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The example app started with an MCP server, as its README says (here the real server-filesystem from npm,
 * installed by the build from src/test/mcp-server's lock file, allowed one temporary folder): the page shows
 * the server's tools as tool steps, and the approval card for one that is not marked read-only, like any
 * other host action's. The Bridge simulator calls the tool the message names, with the JSON the message holds.
 */
@SpringBootTest(classes = ExampleApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.datasource.url=jdbc:sqlite:target/mcp-browser-test.db",
            "example.simulator.events-per-second=25"
        })
class McpToolsPageBrowserTest {
    private static final Path SERVER = Paths.get("src/test/mcp-server/node_modules/@modelcontextprotocol/"
            + "server-filesystem/dist/index.js").toAbsolutePath();
    private static Path folder;
    private static ChatPage page;

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void server(DynamicPropertyRegistry registry) throws IOException {
        folder = Files.createTempDirectory("parley-mcp-page").toRealPath();
        // all of the server in one property source: Boot binds a list from one source, never merged
        registry.add("parley.mcp.servers[0].name", () -> "files");
        registry.add("parley.mcp.servers[0].command", () -> "node");
        registry.add("parley.mcp.servers[0].args[0]", SERVER::toString);
        registry.add("parley.mcp.servers[0].args[1]", folder::toString);
    }

    /** Before the app starts (and its properties are read): skips the test where Node.js or a browser is missing. */
    @BeforeAll
    static void startBrowser() throws IOException {
        BuildTools.assumePresent("node");
        Files.deleteIfExists(Paths.get("target/mcp-browser-test.db"));
        page = ChatPage.start();
    }

    @AfterEach
    void printConsole(org.junit.jupiter.api.TestInfo test) throws IOException {
        page.screenshot("mcp-after-" + test.getTestMethod().map(java.lang.reflect.Method::getName).orElse("test"));
        page.printConsole();
    }

    @AfterAll
    static void stopBrowser() {
        if (page != null) {
            page.close();
        }
    }

    @Test
    void anMcpToolAsksFirstOnThePageRunsOnceAllowedAndAReadOnlyOneRunsUnasked() throws IOException {
        Path note = folder.resolve("note.txt");
        page.open(port);
        page.send("action files__write_file {\"path\": \"" + note + "\", \"content\": \"written through MCP\"}");
        WebElement card = page.waitFor(".approval-card");
        assertThat(card.findElement(By.cssSelector(".approval-title")).getText()).contains("files__write_file");
        assertThat(card.findElement(By.cssSelector(".approval-description")).getText())
                .contains("MCP server files").contains("does not say it only reads");
        assertThat(note).as("nothing runs before the answer").doesNotExist();
        page.screenshot("mcp-01-approval-card");

        page.click(".approval-card [data-decision='allow_once']");
        page.awaitLastAnswerStatus("COMPLETED");
        assertThat(Files.readString(note)).isEqualTo("written through MCP");
        assertThat(page.lastAnswerText()).contains("files__write_file").contains("Successfully wrote");
        page.await(() -> page.lastSummary().contains("Allowed files__write_file once"));

        page.send("action files__read_text_file {\"path\": \"" + note + "\"}");
        page.awaitLastAnswerStatus("COMPLETED");
        assertThat(page.lastAnswerText()).as("read-only: no approval asked").contains("written through MCP");
        assertThat(page.count(".approval-card")).isZero();
        page.click("article.assistant:last-of-type details.summary > summary");
        page.await(() -> page.lastAnswerCard().contains("files__read_text_file"));
        page.screenshot("mcp-02-read-only-tool-step");
    }
}
