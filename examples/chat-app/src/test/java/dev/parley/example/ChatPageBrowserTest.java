package dev.parley.example;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.openqa.selenium.By;
import org.openqa.selenium.Keys;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The chat page in headless Chromium (Debian's chromium + chromium-driver), driving the whole app: the
 * page, the starter's endpoints, the engine, the SQLite store and the Bridge simulator over real HTTP.
 * Screenshots go to {@code target/screenshots/} for people to look at.
 */
@SpringBootTest(classes = ExampleApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {
            "spring.datasource.url=jdbc:sqlite:target/browser-test.db",
            "example.simulator.events-per-second=25"
        })
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ChatPageBrowserTest {
    private static ChatPage page;
    private static ChromeDriver driver;
    private static WebDriverWait wait;

    @LocalServerPort
    int port;

    @BeforeAll
    static void startBrowser() throws IOException {
        Files.deleteIfExists(Paths.get("target/browser-test.db"));
        page = ChatPage.start();
        driver = page.driver();
        wait = page.waiter();
    }

    /** A screenshot and the page's console after each test, so that a failure shows what the page said. */
    @AfterEach
    void printConsole(org.junit.jupiter.api.TestInfo test) throws IOException {
        screenshot("after-" + test.getTestMethod().map(java.lang.reflect.Method::getName).orElse("test"));
        page.printConsole();
    }

    @AfterAll
    static void stopBrowser() {
        if (page != null) {
            page.close();
        }
    }

    /** The first test opens the page; the others go on in the same conversation. */
    private void openPage() {
        page.open(port);
    }

    private void send(String text) {
        page.send(text);
    }

    private WebElement waitFor(String css) {
        return page.waitFor(css);
    }

    private Object js(String script, Object... args) {
        return page.js(script, args);
    }

    private long count(String css) {
        return page.count(css);
    }

    private String lastAnswerStatus() {
        return page.lastAnswerStatus();
    }

    private String lastAnswerText() {
        return page.lastAnswerText();
    }

    private String lastAnswerCard() {
        return page.lastAnswerCard();
    }

    private void awaitLastAnswerStatus(String status) {
        page.awaitLastAnswerStatus(status);
    }

    private void click(String css) {
        page.click(css);
    }

    private void screenshot(String name) throws IOException {
        page.screenshot(name);
    }

    private String lastSummary() {
        return page.lastSummary();
    }

    @Test
    @Order(1)
    void aRunShowsItsThinkingToolsAndTodosLiveThenFoldsIntoASummary() throws IOException {
        openPage();
        assertThat(driver.findElement(By.id("runtime-badge")).getText()).isEqualTo("Simulator");
        assertThat(driver.findElement(By.id("simulator-hint")).isDisplayed()).isTrue();
        send("Please use the tools to plan my trip");
        waitFor("article.assistant[data-status='IN_PROGRESS'] .live-status");
        waitFor("article.assistant[data-status='IN_PROGRESS'] .thinking-stream");
        wait.until(d -> count("article.assistant[data-status='IN_PROGRESS'] .current-tool") > 0
                || count("article.assistant[data-status='IN_PROGRESS'] .tool-history li") > 0);
        waitFor("article.assistant[data-status='IN_PROGRESS'] .todo-list li");
        screenshot("01-live-panel");
        List<?> live = (List<?>) js("const a = [...document.querySelectorAll('article.assistant')].pop();"
                + " return [a.dataset.status, document.getElementById('stop').checkVisibility()];");
        if ("IN_PROGRESS".equals(live.get(0))) {
            assertThat(live.get(1)).as("Stop shows while the run works").isEqualTo(true);
        }

        awaitLastAnswerStatus("COMPLETED");
        wait.until(d -> count("article.assistant details.summary") == 1);
        assertThat(js("return document.querySelector('article.assistant details.summary').open")).as("the live panel folds")
                .isEqualTo(false);
        assertThat((String) js("return document.querySelector('article.assistant details.summary > summary').innerText"))
                .contains("tool call").contains("todos");
        assertThat(lastAnswerText()).isNotBlank();
        click("article.assistant details.summary > summary");
        wait.until(d -> count("article.assistant details.summary[open] .tool-history li") > 0);
        wait.until(d -> "Please use the tools to plan m".equals(d.findElement(By.id("session-title")).getText()));
        screenshot("02-folded-summary");
    }

    @Test
    @Order(2)
    void aClarifyQuestionIsAnsweredFromThePage() throws IOException {
        send("clarify the format for me");
        WebElement panel = waitFor(".clarify-panel");
        assertThat(panel.findElement(By.cssSelector(".question")).getText()).contains("Which format");
        screenshot("03-clarify");
        click(".clarify-panel button.choice:nth-child(3)");
        awaitLastAnswerStatus("COMPLETED");
        assertThat(lastAnswerText()).contains("You chose A table");
        wait.until(d -> lastAnswerCard().contains("you answered A table"));
    }

    @Test
    @Order(3)
    void aReloadMidRunResumesTheStream() throws IOException {
        send("slow please, I want to watch");
        wait.until(d -> lastAnswerText().length() > 30);
        String before = lastAnswerText();
        assertThat(lastAnswerStatus()).isEqualTo("IN_PROGRESS");
        driver.navigate().refresh();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("runtime-badge")));
        wait.until(d -> lastAnswerText().startsWith(before));
        screenshot("04-after-reload");
        awaitLastAnswerStatus("COMPLETED");
        String finished = lastAnswerText();
        assertThat(finished).startsWith(before).hasSizeGreaterThan(before.length());
        assertThat(finished.indexOf(before.substring(0, 20), 1)).as("nothing streamed twice").isEqualTo(-1);
    }

    @Test
    @Order(4)
    void scriptInjectionRendersAsText() throws IOException {
        String attack = "<img src=x onerror=\"window.__parleyXss=1\"><script>window.__parleyXss=2</script> **bold**";
        send(attack);
        awaitLastAnswerStatus("COMPLETED");
        assertThat(lastAnswerText()).contains("<script>window.__parleyXss=2</script>");
        assertThat(count("article.assistant .answer strong")).as("Markdown still renders").isPositive();
        assertThat(count("#turns img")).isZero();
        assertThat(count("#turns script")).isZero();
        assertThat(js("return window.__parleyXss === undefined")).isEqualTo(true);
        screenshot("05-injection-as-text");
    }

    @Test
    @Order(5)
    void stopRegenerateVariantsAndFeedback() throws IOException {
        send("slow, and I will stop you half way");
        wait.until(d -> lastAnswerText().length() > 10);
        driver.findElement(By.id("stop")).click();
        awaitLastAnswerStatus("CANCELLED");
        wait.until(d -> lastAnswerCard().contains("Stopped."));
        click("article.assistant [data-action='regenerate']");
        wait.until(d -> count(".variants.many article.assistant") == 2);
        wait.until(d -> lastAnswerText().length() > 10);
        driver.findElement(By.id("stop")).click();
        awaitLastAnswerStatus("CANCELLED");
        wait.until(d -> count(".variants.many article.assistant[data-status='CANCELLED']") == 2
                && d.findElement(By.id("send")).isEnabled());
        @SuppressWarnings("unchecked")
        List<Object> variants = (List<Object>) js("return [...document.querySelectorAll('.variants.many article.assistant')]"
                + ".map(a => [a.querySelector('.variant-label').innerText, Math.round(a.getBoundingClientRect().top)])");
        assertThat(variants).hasSize(2);
        assertThat(((List<?>) variants.get(0)).get(0)).isEqualTo("Answer 1 of 2");
        assertThat(((List<?>) variants.get(1)).get(0)).isEqualTo("Answer 2 of 2");
        assertThat(((List<?>) variants.get(0)).get(1)).as("side by side").isEqualTo(((List<?>) variants.get(1)).get(1));
        click(".variants.many article.assistant:nth-child(2) [data-action='up']");
        wait.until(d -> count(".variants.many article.assistant:nth-child(2) [data-action='up'].chosen") == 1);
        screenshot("06-variants");
    }

    @Test
    @Order(6)
    void reopeningASessionReplaysTheWholeHistory() throws IOException {
        String title = driver.findElement(By.cssSelector("#sessions .session.active .title")).getText();
        driver.findElement(By.id("new-session")).click();
        wait.until(d -> count("article.assistant") == 0);
        driver.findElement(By.xpath("//li[contains(@class,'session')]/span[normalize-space()='" + title + "']")).click();
        wait.until(d -> count("article.assistant") >= 6);
        List<String> users = driver.findElements(By.cssSelector(".user")).stream().map(WebElement::getText)
                .collect(Collectors.toList());
        assertThat(users).contains("Please use the tools to plan my trip", "clarify the format for me",
                "slow please, I want to watch");
        assertThat(count("details.summary")).isGreaterThanOrEqualTo(4);
        assertThat(count(".variants.many article.assistant")).isEqualTo(2);
        screenshot("07-history");

        click("#sessions .session.active .rename");
        WebElement rename = waitFor("#sessions .rename-input");
        rename.sendKeys(Keys.chord(Keys.CONTROL, "a"), "Trip planning", Keys.ENTER);
        wait.until(d -> d.findElement(By.id("session-title")).getText().equals("Trip planning"));
        assertThat(driver.findElement(By.cssSelector("#sessions .session.active .title")).getText()).isEqualTo("Trip planning");
    }

    @Test
    @Order(7)
    void aSessionCanBeDeleted() {
        send("a throwaway chat");
        awaitLastAnswerStatus("COMPLETED");
        long before = count("#sessions .session");
        click("#sessions .session.active .delete");
        driver.switchTo().alert().accept();
        wait.until(d -> count("#sessions .session") == before - 1);
        assertThat(count("article.assistant")).isZero();
    }

    // ------------------------------------------------------------------ approvals and the page's own tool

    /** Puts text into the approval card's arguments as a person typing would (the page keeps it as a draft). */
    private void editArguments(String json) {
        js("const t = document.querySelector('.approval-card textarea.approval-args'); t.value = arguments[0];"
                + "t.dispatchEvent(new Event('input', {bubbles: true}));", json);
    }


    @Test
    @Order(8)
    void anApprovalIsAllowedWithEditedArgumentsAndTheHandlerRunsWithThem() throws IOException {
        send("action refund_order for order 42");
        WebElement card = waitFor(".approval-card");
        assertThat(card.findElement(By.cssSelector(".approval-title")).getText()).contains("refund_order");
        assertThat(card.findElement(By.cssSelector(".approval-description")).getText()).contains("cannot be undone");
        assertThat((String) js("return document.querySelector('.approval-card textarea.approval-args').value"))
                .as("the arguments, pretty-printed").contains("\n  \"input\": \"action refund_order for order 42\"");
        assertThat(js("return [...document.querySelectorAll('.approval-card [data-action=decide]')].map(b => b.innerText)"))
                .as("exactly the offered decisions").isEqualTo(List.of("Allow once", "Deny"));
        screenshot("08-approval-card");

        editArguments("{\"order\": 43, oops");
        click(".approval-card [data-decision='allow_once']");
        wait.until(d -> count(".approval-card .approval-error") == 1);
        assertThat(lastAnswerStatus()).as("nothing was sent").isEqualTo("IN_PROGRESS");
        editArguments("{\"order\": 43, \"amount\": 5}");
        click(".approval-card [data-decision='allow_once']");
        awaitLastAnswerStatus("COMPLETED");
        assertThat(lastAnswerText()).as("the handler ran with the edited arguments")
                .contains("Refunded (simulated) with {\"order\":43,\"amount\":5}");
        wait.until(d -> lastSummary().contains("Allowed refund_order once (arguments edited)"));
        click("article.assistant details.summary > summary");
        wait.until(d -> lastAnswerCard().contains("Allowed refund_order once (arguments edited)")
                && count("details.summary[open] .tool-history li") > 0);
        screenshot("09-approval-allowed");
    }

    @Test
    @Order(9)
    void aDeniedApprovalIsRecordedAndTheModelIsTold() throws IOException {
        send("action refund_order once more");
        waitFor(".approval-card");
        click(".approval-card [data-decision='deny']");
        awaitLastAnswerStatus("COMPLETED");
        assertThat(lastAnswerText()).as("the model was told").contains("the person denied this call of refund_order");
        wait.until(d -> lastSummary().contains("Denied refund_order"));
        assertThat(count(".approval-card")).isZero();
        screenshot("10-approval-denied");
    }

    @Test
    @Order(10)
    void aToolThePageRunsAnswersTheCall() throws IOException {
        String zone = (String) js("return Intl.DateTimeFormat().resolvedOptions().timeZone");
        send("action get_local_time, what time is it for me?");
        awaitLastAnswerStatus("COMPLETED");
        assertThat(lastAnswerText()).contains("get_local_time").contains("\"timeZone\":\"" + zone + "\"");
        click("article.assistant details.summary > summary");
        wait.until(d -> (Boolean) js("return [...document.querySelectorAll('details.summary[open] .tool-history li')]"
                + ".some(li => li.innerText.includes('get_local_time') && li.innerText.includes(arguments[0]))", zone));
        screenshot("11-client-tool");
    }

    @Test
    @Order(11)
    void aReloadWhileAnApprovalWaitsBringsTheCardBack() throws IOException {
        send("action refund_order, I will reload first");
        waitFor(".approval-card");
        driver.navigate().refresh();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("runtime-badge")));
        waitFor(".approval-card [data-decision='allow_once']");
        screenshot("12-approval-after-reload");
        click(".approval-card [data-decision='allow_once']");
        awaitLastAnswerStatus("COMPLETED");
        assertThat(lastAnswerText()).contains("Refunded (simulated)");
        wait.until(d -> lastSummary().contains("Allowed refund_order once") && !lastSummary().contains("edited"));
    }

    // ------------------------------------------------------------------ edits and branches, search, downloads

    private String lastUserText() {
        return (String) js("const u = [...document.querySelectorAll('.user')].pop(); return u ? u.innerText : '';");
    }

    private String lastBranchPosition() {
        return (String) js("const p = [...document.querySelectorAll('.user-turn .branch-position')].pop();"
                + " return p ? p.innerText : '';");
    }

    @Test
    @Order(12)
    void anEditedMessageGetsASwitcherBetweenItsBranches() throws IOException {
        driver.findElement(By.id("new-session")).click();
        send("plan a weekend away");
        awaitLastAnswerStatus("COMPLETED");
        send("what about Lisbon?");
        awaitLastAnswerStatus("COMPLETED");
        assertThat(lastBranchPosition()).as("no switcher before an edit").isEmpty();

        click(".user-turn [data-action='edit']");
        WebElement box = waitFor(".edit-input");
        assertThat(box.getAttribute("value")).isEqualTo("what about Lisbon?");
        box.sendKeys(Keys.chord(Keys.CONTROL, "a"), "what about Porto?");
        click("[data-action='edit-save']");
        wait.until(d -> "what about Porto?".equals(lastUserText()) && "2 / 2".equals(lastBranchPosition()));
        awaitLastAnswerStatus("COMPLETED");
        assertThat(js("return [...document.querySelectorAll('.user')].map(u => u.innerText)"))
                .asList().containsExactly("plan a weekend away", "what about Porto?");
        screenshot("13-edited-branch");

        click(".user-turn .branch-switcher button[title='Previous version']");
        wait.until(d -> "what about Lisbon?".equals(lastUserText()) && "1 / 2".equals(lastBranchPosition()));
        assertThat(count("article.assistant")).as("the old branch with its answer").isEqualTo(2);
        screenshot("14-switched-back");
        click(".user-turn .branch-switcher button[title='Next version']");
        wait.until(d -> "what about Porto?".equals(lastUserText()) && "2 / 2".equals(lastBranchPosition()));

        driver.navigate().refresh();
        wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("runtime-badge")));
        wait.until(d -> "what about Porto?".equals(lastUserText()) && "2 / 2".equals(lastBranchPosition()));
    }

    @Test
    @Order(13)
    void theSearchBoxFindsAConversationAndItDownloads() throws IOException, InterruptedException {
        String session = ((String) js("return location.hash")).replace("#/s/", "");
        driver.findElement(By.id("new-session")).click();
        WebElement search = driver.findElement(By.id("session-search"));
        search.sendKeys("Porto");
        wait.until(d -> count("#sessions .session.hit") == 1);
        assertThat((String) js("return document.querySelector('#sessions .session.hit .snippet').innerText"))
                .contains("Porto");
        assertThat((String) js("return document.querySelector('#sessions .session.hit .snippet mark').innerText"))
                .as("the matched word marked in the hit").isEqualTo("Porto");
        screenshot("15-search");
        click("#sessions .session.hit");
        wait.until(d -> ("#/s/" + session).equals(js("return location.hash")) && count(".search-target mark") > 0);
        assertThat((String) js("return document.querySelector('.search-target').dataset.messageId"))
                .as("the message the hit is from").isNotBlank();
        assertThat((String) js("return [...document.querySelectorAll('.search-target mark')].map(m => m.innerText)"
                + ".join(' ')")).as("its matched words marked").isEqualTo("Porto");
        screenshot("15b-search-hit-opened");
        driver.findElement(By.id("new-session")).click();
        search.sendKeys(Keys.chord(Keys.CONTROL, "a"), "\"unbalanced NEAR *");
        wait.until(d -> count("#sessions .session.hit") == 0 && d.findElement(By.id("search-note")).isDisplayed());
        assertThat(driver.findElement(By.id("error-bar")).isDisplayed()).as("no error, just no match").isFalse();
        search.sendKeys(Keys.chord(Keys.CONTROL, "a"), "weekend");
        wait.until(d -> count("#sessions .session.hit") == 1);
        click("#sessions .session.hit");
        wait.until(d -> ("#/s/" + session).equals(js("return location.hash")) && "what about Porto?".equals(lastUserText()));
        search.sendKeys(Keys.chord(Keys.CONTROL, "a"), Keys.BACK_SPACE);
        wait.until(d -> count("#sessions .session.hit") == 0 && count("#sessions .session") > 1);

        Path downloads = Files.createDirectories(Paths.get("target", "downloads").toAbsolutePath());
        Path file = downloads.resolve("parley-" + session + ".md");
        Files.deleteIfExists(file);
        driver.executeCdpCommand("Browser.setDownloadBehavior",
                java.util.Map.of("behavior", "allow", "downloadPath", downloads.toString()));
        click("#export-markdown");
        wait.until(d -> Files.exists(file));
        String markdown = "";
        for (int i = 0; i < 100 && !markdown.contains("what about Porto?"); i++) {
            Thread.sleep(50);
            markdown = Files.readString(file);
        }
        assertThat(markdown).contains("plan a weekend away", "what about Porto?").doesNotContain("what about Lisbon?");
    }

    /**
     * The Bridge simulator takes files: an image dropped on the page goes with the message through the Hermes
     * adapter, and the simulator's answer names what it received (name, type, size, hash).
     */
    @Test
    @Order(14)
    void aDroppedImageReachesTheSimulatorWithTheMessage() throws Exception {
        driver.findElement(By.id("new-session")).click();
        wait.until(d -> d.findElement(By.id("attach")).isDisplayed());
        byte[] png = ChatPage.redPng(30, 20);
        assertThat(page.dropFile("red.png", "image/png", png)).containsExactly(true, false, false);
        waitFor(".composer-file[data-state='done'] img.thumb");
        send("what is in this picture?");
        awaitLastAnswerStatus("COMPLETED");
        String sha256 = java.util.HexFormat.of().formatHex(java.security.MessageDigest.getInstance("SHA-256")
                .digest(png));
        assertThat(lastAnswerText()).contains("Received red.png (image/png, " + png.length + " bytes, sha256 "
                + sha256.substring(0, 12) + ")");
        wait.until(d -> Boolean.TRUE.equals(js("const img = [...document.querySelectorAll('.user-turn .message-files"
                + " img.thumb')].pop(); return !!img && img.complete && img.naturalWidth === 30;")));
        screenshot("16-file-sent");
    }

    /**
     * "Continue from here" on an earlier answer rolls the conversation back to it; the next message starts a
     * branch beside what followed (the switcher shows both), and Undo takes the last exchange back. A stopped
     * answer offers "Continue", which asks the agent to go on in a new exchange.
     */
    @Test
    @Order(15)
    void anEarlierAnswerCanBeContinuedFromAndTheLastExchangeUndone() throws IOException {
        driver.findElement(By.id("new-session")).click();
        for (String text : List.of("first question", "second question", "third question")) {
            send(text);
            awaitLastAnswerStatus("COMPLETED");
        }
        wait.until(d -> count("article.assistant [data-action='rollback']") == 2
                && count("article.assistant [data-action='undo']") == 1);
        js("document.querySelector(\"article.assistant [data-action='rollback']\").click()");
        wait.until(d -> userTexts().equals(List.of("first question")));
        assertThat(count("[data-action='undo']")).as("the first exchange has nothing before it").isZero();

        send("second, differently");
        awaitLastAnswerStatus("COMPLETED");
        wait.until(d -> "2 / 2".equals(js("const p = [...document.querySelectorAll('.branch-position')].pop();"
                + " return p ? p.innerText : ''")));
        screenshot("17-continued-from-an-earlier-answer");
        click("article.assistant [data-action='undo']");
        wait.until(d -> userTexts().equals(List.of("first question")));

        send("slow, and I will stop you half way");
        wait.until(d -> lastAnswerText().length() > 10);
        driver.findElement(By.id("stop")).click();
        awaitLastAnswerStatus("CANCELLED");
        click("article.assistant [data-action='continue']");
        wait.until(d -> userTexts().size() == 3 && userTexts().get(2).startsWith("Continue from where"));
        awaitLastAnswerStatus("COMPLETED");
        assertThat(count("[data-action='continue']")).as("offered only on an answer that ended early").isZero();
    }

    @SuppressWarnings("unchecked")
    private List<String> userTexts() {
        return (List<String>) js("return [...document.querySelectorAll('.user')].map(u => u.innerText)");
    }
}
