package dev.parley.example;

import dev.parley.chat.testing.BuildTools;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.logging.Level;
import org.junit.jupiter.api.Assumptions;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.Keys;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.logging.LoggingPreferences;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The example's chat page in headless Chromium (Debian's chromium + chromium-driver), as a person uses it:
 * typing, sending, clicking. Reads the DOM in one script per question, which avoids racing the page's
 * re-renders. Screenshots go to {@code target/screenshots/}. Not thread-safe: one test class drives it.
 */
final class ChatPage implements AutoCloseable {
    private static final Path SCREENSHOTS = Paths.get("target/screenshots");

    private final ChromeDriver driver;
    private final WebDriverWait wait;

    private ChatPage(ChromeDriver driver) {
        this.driver = driver;
        this.wait = new WebDriverWait(driver, Duration.ofSeconds(30));
        wait.pollingEvery(Duration.ofMillis(50)).ignoring(StaleElementReferenceException.class);
    }

    /**
     * Starts the browser ({@code chromium} and {@code chromedriver} on PATH), or skips the calling test where the
     * machine has none.
     */
    static ChatPage start() throws IOException {
        BuildTools.assumePresent("browser");
        Optional<Path> chromium = BuildTools.onPath("chromium");
        Optional<Path> chromedriver = BuildTools.onPath("chromedriver");
        Assumptions.assumeTrue(chromium.isPresent() && chromedriver.isPresent(),
                "SKIPPED: no browser here. The chat page tests need chromium and chromedriver on PATH "
                        + "(Debian: apt-get install chromium chromium-driver).");
        Files.createDirectories(SCREENSHOTS);
        ChromeOptions options = new ChromeOptions();
        options.setBinary(chromium.get().toString());
        options.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--window-size=1400,1000",
                "--user-data-dir=" + Files.createTempDirectory("parley-chromium"));
        LoggingPreferences logs = new LoggingPreferences();
        logs.enable(LogType.BROWSER, Level.ALL);
        options.setCapability("goog:loggingPrefs", logs);
        ChromeDriverService service = new ChromeDriverService.Builder()
                .usingDriverExecutable(chromedriver.get().toFile()).usingAnyFreePort().build();
        return new ChatPage(new ChromeDriver(service, options));
    }

    /** The browser, for what this page object does not cover. */
    ChromeDriver driver() {
        return driver;
    }

    /** The wait every method here uses: 30 s, polled every 50 ms, stale elements retried. */
    WebDriverWait waiter() {
        return wait;
    }

    /** Opens the page and waits until it has asked the app which runtime it talks to. */
    void open(int port) {
        driver.get("http://localhost:" + port + "/");
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("runtime-badge")));
    }

    /** Types a message, sends it with Enter, and waits until the page shows it and its answer has begun. */
    void send(String text) {
        long before = count(".user");
        WebElement input = driver.findElement(By.id("input"));
        input.sendKeys(text);
        input.sendKeys(Keys.ENTER);
        wait.until(d -> count(".user") > before && text.equals(js(
                "return [...document.querySelectorAll('.user')].pop().innerText")) && !lastAnswerStatus().isEmpty());
    }

    WebElement waitFor(String css) {
        return wait.until(ExpectedConditions.presenceOfElementLocated(By.cssSelector(css)));
    }

    /** Runs a script in the page. */
    Object js(String script, Object... args) {
        return ((JavascriptExecutor) driver).executeScript(script, args);
    }

    /**
     * Drops a file on the chat as a person dragging it from their desktop does (dragenter, dragover, drop; a
     * WebDriver cannot drag from outside the page). Returns whether the drop hint showed while dragging, whether
     * the page let the dragover through uncancelled, and whether the hint still shows after the drop.
     */
    List<Object> dropFile(String name, String type, byte[] content) {
        @SuppressWarnings("unchecked")
        List<Object> seen = (List<Object>) js("""
                const [b64, name, type] = arguments;
                const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
                const transfer = new DataTransfer();
                transfer.items.add(new File([bytes], name, { type }));
                const zone = document.getElementById('chat');
                const fire = (kind) => zone.dispatchEvent(new DragEvent(kind, { bubbles: true, cancelable: true, dataTransfer: transfer }));
                fire('dragenter');
                const notCancelled = fire('dragover');
                const hinted = zone.classList.contains('dropping');
                fire('drop');
                return [hinted, notCancelled, zone.classList.contains('dropping')];
                """, java.util.Base64.getEncoder().encodeToString(content), name, type);
        return seen;
    }

    /** A real PNG of one red rectangle, so that the page's thumbnails decode it. */
    static byte[] redPng(int width, int height) throws IOException {
        java.awt.image.BufferedImage image = new java.awt.image.BufferedImage(width, height,
                java.awt.image.BufferedImage.TYPE_INT_RGB);
        for (int x = 0; x < width; x++) {
            for (int y = 0; y < height; y++) {
                image.setRGB(x, y, java.awt.Color.RED.getRGB());
            }
        }
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        javax.imageio.ImageIO.write(image, "png", out);
        return out.toByteArray();
    }

    long count(String css) {
        return (Long) js("return document.querySelectorAll(arguments[0]).length", css);
    }

    String text(String css) {
        return driver.findElement(By.cssSelector(css)).getText();
    }

    String lastAnswerStatus() {
        return (String) js("const a = [...document.querySelectorAll('article.assistant')].pop(); return a ? a.dataset.status : '';");
    }

    /** The visible text of the newest answer. */
    String lastAnswerText() {
        return (String) js("const a = [...document.querySelectorAll('article.assistant .answer')].pop(); return a ? a.innerText : '';");
    }

    /** All text of the newest answer's card, folded details included. */
    String lastAnswerCard() {
        return (String) js("const a = [...document.querySelectorAll('article.assistant')].pop(); return a ? a.textContent : '';");
    }

    /** The summary line of the newest answer's folded steps. */
    String lastSummary() {
        return (String) js("const s = [...document.querySelectorAll('article.assistant details.summary > summary')].pop();"
                + " return s ? s.innerText : '';");
    }

    void awaitLastAnswerStatus(String status) {
        wait.until(d -> status.equals(lastAnswerStatus()));
    }

    /** Waits until the condition, read from the page, holds. */
    void await(java.util.function.BooleanSupplier condition) {
        wait.until(d -> condition.getAsBoolean());
    }

    /** Clicks the last element matching {@code css}, retrying while the page re-renders it. */
    void click(String css) {
        wait.until(d -> {
            List<WebElement> found = d.findElements(By.cssSelector(css));
            if (found.isEmpty()) {
                return false;
            }
            found.get(found.size() - 1).click();
            return true;
        });
    }

    void screenshot(String name) throws IOException {
        Files.write(SCREENSHOTS.resolve(name + ".png"), driver.getScreenshotAs(OutputType.BYTES));
    }

    /** Prints the page's console, so that a failure shows what the page said. */
    void printConsole() {
        for (LogEntry entry : driver.manage().logs().get(LogType.BROWSER)) {
            System.out.println("[browser " + entry.getLevel() + "] " + entry.getMessage());
        }
    }

    @Override
    public void close() {
        driver.quit();
    }
}
