package dev.parley.example;

import com.sun.net.httpserver.HttpServer;
import dev.parley.chat.testing.BuildTools;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;

/**
 * The CopilotKit example ({@code examples/copilotkit-app}, bundled by the build into {@code target/copilotkit-page})
 * in headless Chromium: its own server on another origin than the hosts, so every call goes through CORS with
 * credentials, and what a person does on its pages. The pages are CopilotKit's stock chats: the v2 chat with the
 * example's thread list ({@code index.html}) and the v1 chat ({@code v1.html}). Not thread-safe: one test class
 * drives it; {@link #close} stops the browser and the page server.
 */
final class CopilotKitBrowser implements AutoCloseable {
    static final String V2 = "index.html";
    static final String V1 = "v1.html";
    private static final Path PAGE = Paths.get("target/copilotkit-page");
    private static final Map<String, String> TYPES = Map.of("html", "text/html; charset=utf-8",
            "js", "text/javascript; charset=utf-8", "css", "text/css; charset=utf-8", "woff2", "font/woff2",
            "woff", "font/woff", "ttf", "font/ttf");

    private final HttpServer pageServer;
    private ChatPage browser;

    private CopilotKitBrowser(HttpServer pageServer) {
        this.pageServer = pageServer;
    }

    /**
     * Starts the page server at once (a host's allowed origins need {@link #origin} before the host starts); the
     * browser starts with {@link #startBrowser}.
     */
    static CopilotKitBrowser serveExample() {
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/", exchange -> {
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
        server.start();
        return new CopilotKitBrowser(server);
    }

    /** The pages' origin, for a host's {@code parley.web.copilotkit.allowed-origins}. */
    String origin() {
        return "http://localhost:" + pageServer.getAddress().getPort();
    }

    /** Starts Chromium, or skips the calling tests where npm (which builds the pages) or the browser is missing. */
    void startBrowser() throws IOException {
        BuildTools.assumePresent("npm");
        Assumptions.assumeTrue(Files.isRegularFile(PAGE.resolve("app.js")),
                "SKIPPED: the CopilotKit example was not built (target/copilotkit-page); the build bundles it where npm is");
        browser = ChatPage.start();
    }

    ChatPage page() {
        return browser;
    }

    /** Opens {@code page} on the thread against the host at {@code hostBase}, once its chat reached the runtime. */
    void open(String page, String hostBase, String threadId) {
        String runtimeUrl = hostBase + "/api/chat/copilotkit";
        browser.driver().get(origin() + "/" + page + "?thread=" + threadId + "&runtimeUrl="
                + URLEncoder.encode(runtimeUrl, StandardCharsets.UTF_8));
        awaitReady();
    }

    void reload() {
        browser.driver().navigate().refresh();
        awaitReady();
    }

    /** Waits for the page's chat to have reached the runtime: a message typed before that is lost. */
    void awaitReady() {
        browser.waitFor("[data-testid=copilot-chat-textarea]");
        browser.waiter().until(driver -> Boolean.TRUE.equals(browser.js(
                "return window.parleyCopilotKit?.runtimeConnectionStatus === 'connected'")));
    }

    void send(String text) {
        browser.driver().findElement(By.cssSelector("[data-testid=copilot-chat-textarea]")).sendKeys(text, Keys.ENTER);
    }

    /** The v2 chat's user and assistant messages, once {@code answers} answers stand finished. */
    @SuppressWarnings("unchecked")
    List<String> awaitConversation(int answers) {
        browser.waiter().until(driver -> browser.count("[data-testid=copilot-assistant-message]") == answers
                && browser.count("[data-copilot-running=true]") == 0);
        return (List<String>) browser.js("return [...document.querySelectorAll("
                + "'[data-testid=copilot-user-message], [data-testid=copilot-assistant-message]')]"
                + ".map(m => (m.getAttribute('data-testid').includes('user') ? 'user: ' : 'assistant: ')"
                + " + m.innerText.trim())");
    }

    /** Waits for the v2 chat's (only) answer to show some text while its run goes on. */
    void awaitAnswerStreaming() {
        browser.waiter().until(driver -> browser.count("[data-copilot-running=true]") == 1
                && browser.count("[data-testid=copilot-assistant-message]") == 1
                && !String.valueOf(browser.js("return document.querySelector("
                        + "'[data-testid=copilot-assistant-message]').innerText")).isBlank());
    }

    /** The v2 chat's first answer as shown. */
    String answerOnPage() {
        return String.valueOf(browser.js("return document.querySelector('[data-testid=copilot-assistant-message]')"
                + ".innerText")).strip();
    }

    /** Clicks the v2 chat's send button, which is its stop button while a run goes on. */
    void clickStop() {
        browser.driver().findElement(By.cssSelector("[data-testid=copilot-send-button]")).click();
    }

    @Override
    public void close() {
        if (browser != null) {
            browser.close();
        }
        pageServer.stop(0);
    }
}
