package dev.parley.example;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.reduce.RunReducer;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The example app started twice, as two processes on two ports, against one PostgreSQL: a run started
 * through one instance is followed, after a reconnect, through the other, and stopped through the other;
 * likewise through the CopilotKit endpoint, where a page reloaded onto the other instance re-joins the run; and
 * the CopilotKit example in Chromium, reloaded onto the other instance mid-answer and onto an instance restarted
 * on the same database.
 */
class TwoInstancesTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static EmbeddedPostgres postgres;
    private static final List<Process> apps = new ArrayList<>();
    private static String first;
    private static String second;
    /** The CopilotKit example's pages, on their own origin, which both instances allow. */
    private static final CopilotKitBrowser copilotKit = CopilotKitBrowser.serveExample();

    @BeforeAll
    static void startTwoApps() throws Exception {
        postgres = EmbeddedPostgres.builder().start();
        String url = postgres.getJdbcUrl("postgres", "postgres");
        apps.add(launch("a", url));
        apps.add(launch("b", url));
        first = awaitUp("a", apps.get(0));
        second = awaitUp("b", apps.get(1));
    }

    @AfterAll
    static void stopEverything() throws Exception {
        copilotKit.close();
        for (Process app : apps) {
            app.destroy();
        }
        for (Process app : apps) {
            if (!app.waitFor(20, TimeUnit.SECONDS)) {
                app.destroyForcibly();
            }
        }
        if (postgres != null) {
            postgres.close();
        }
    }

    private static Path log(String name) {
        return Paths.get("target", "two-instances-" + name + ".log");
    }

    /**
     * Starts the example app in its own JVM, with this test's class path, on a port it picks itself (a port
     * chosen here and freed before the app binds it can be taken meanwhile, e.g. by the other app's Bridge
     * simulator).
     */
    private static Process launch(String name, String jdbcUrl) throws IOException {
        Path log = log(name);
        Files.deleteIfExists(log);
        Files.createDirectories(log.getParent());
        String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
        ProcessBuilder builder = new ProcessBuilder(java, "-Xmx384m", "-cp", System.getProperty("java.class.path"),
                ExampleApplication.class.getName(),
                "--server.port=0",
                "--spring.datasource.url=" + jdbcUrl,
                "--parley.cluster.enabled=true",
                "--parley.cluster.instance-id=instance-" + name,
                "--parley.cluster.lease-timeout=5s",
                "--example.simulator.events-per-second=40",
                "--parley.web.copilotkit.allowed-origins=" + copilotKit.origin())
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.directory(new File("."));
        return builder.start();
    }

    /** Waits until the app says which port it listens on and answers there; returns its base URL. */
    private static String awaitUp(String name, Process app) throws IOException, InterruptedException {
        Pattern started = Pattern.compile("Tomcat started on port (\\d+)");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (System.nanoTime() < deadline && app.isAlive()) {
            // read leniently: the log may end in the middle of a character being written
            Matcher port = started.matcher(Files.exists(log(name))
                    ? new String(Files.readAllBytes(log(name)), StandardCharsets.UTF_8) : "");
            if (port.find()) {
                String base = "http://localhost:" + port.group(1);
                try {
                    if (get(base + "/api/example/info").statusCode() == 200) {
                        return base;
                    }
                } catch (IOException notYet) {
                    // listening, not answering yet
                }
            }
            Thread.sleep(250);
        }
        throw new AssertionError("app " + name + " did not start; see " + log(name));
    }

    private static HttpResponse<String> get(String url) throws IOException, InterruptedException {
        return HTTP.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(20)).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static JsonNode post(String url, String body) throws IOException, InterruptedException {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(url))
                .header("Content-Type", "application/json")
                .POST(body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isBetween(200, 299);
        return ChatJson.shared().readTree(response.body());
    }

    /** Reads SSE events' data (run events as JSON) until {@code count} were read or the stream ended. */
    private static List<String> readEvents(String url, String lastEventId, int count) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(url)).header("Accept", "text/event-stream");
        if (lastEventId != null) {
            request.header("Last-Event-ID", lastEventId);
        }
        HttpResponse<InputStream> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.statusCode()).isEqualTo(200);
        List<String> events = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String line;
            while (events.size() < count && (line = reader.readLine()) != null) {
                if (line.startsWith("data:")) {
                    events.add(line.substring(5));
                }
            }
        }
        return events;
    }

    private static JsonNode awaitStatus(String base, String runId, String status) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            JsonNode state = ChatJson.shared().readTree(get(base + "/api/chat/runs/" + runId + "/state").body());
            if (state.get("run").get("status").asText().equals(status)) {
                return state;
            }
            assertThat(System.nanoTime()).as(runId + " to be " + status + ", is " + state).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    @Test
    void aRunStartedOnOneInstanceIsFollowedOnTheOtherAfterAReconnect() throws Exception {
        String session = post(first + "/api/chat/sessions", "{}").get("id").asText();
        String runId = post(first + "/api/chat/sessions/" + session + "/runs", "{\"message\":\"slow please\"}")
                .get("runId").asText();

        List<String> fromFirst = readEvents(first + "/api/chat/runs/" + runId + "/stream", null, 10);
        assertThat(fromFirst).hasSize(10);
        List<String> fromSecond = readEvents(second + "/api/chat/runs/" + runId + "/stream", "10", Integer.MAX_VALUE);

        RunReducer reducer = new RunReducer();
        long expectedSeq = 1;
        List<String> all = new ArrayList<>(fromFirst);
        all.addAll(fromSecond);
        for (String data : all) {
            var event = ChatJson.shared().readRunEvent(data);
            assertThat(event.seq()).as("no gap, no duplicate across instances").isEqualTo(expectedSeq++);
            reducer.apply(event);
        }
        assertThat(reducer.status().name()).isEqualTo("SUCCEEDED");
        awaitStatus(second, runId, "SUCCEEDED");
        JsonNode view = ChatJson.shared().readTree(get(second + "/api/chat/sessions/" + session).body());
        assertThat(ChatJson.shared().readTree(ChatJson.shared().write(reducer.messages()))).isEqualTo(view.get("messages"));
    }

    /** A CopilotKit {@code RunAgentInput} for the thread, with at most one user message. */
    private static String copilotKitInput(String threadId, String userText) {
        String messages = userText == null ? "[]"
                : "[{\"id\":\"u-" + threadId + "\",\"role\":\"user\",\"content\":\"" + userText + "\"}]";
        return "{\"threadId\":\"" + threadId + "\",\"runId\":\"" + java.util.UUID.randomUUID() + "\",\"messages\":"
                + messages + ",\"tools\":[],\"context\":[],\"state\":{},\"forwardedProps\":{}}";
    }

    /** POSTs to the CopilotKit endpoint and reads its AG-UI events until one of {@code stopType} or the end. */
    private static List<JsonNode> copilotKit(String url, String body, String stopType) throws Exception {
        HttpResponse<InputStream> response = HTTP.send(HttpRequest.newBuilder(URI.create(url))
                .header("Content-Type", "application/json").header("Accept", "text/event-stream")
                .POST(HttpRequest.BodyPublishers.ofString(body)).timeout(Duration.ofSeconds(60)).build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.statusCode()).isEqualTo(200);
        List<JsonNode> events = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                if (line.startsWith("data: ")) {
                    JsonNode event = ChatJson.shared().readTree(line.substring(6));
                    events.add(event);
                    if (event.get("type").asText().equals(stopType)) {
                        break;
                    }
                }
            }
        }
        return events;
    }

    /**
     * A CopilotKit page runs a turn on one instance and is reloaded, mid-answer, onto the other: its connect
     * there answers the thread without the answer, then the answer from its first words, live to its end.
     */
    @Test
    void aCopilotKitPageReloadedOntoTheOtherInstanceReJoinsTheRun() throws Exception {
        String threadId = java.util.UUID.randomUUID().toString();
        List<JsonNode> started = copilotKit(first + "/api/chat/copilotkit/agent/default/run",
                copilotKitInput(threadId, "slow please"), "TEXT_MESSAGE_CONTENT");
        assertThat(started.get(started.size() - 1).get("type").asText()).isEqualTo("TEXT_MESSAGE_CONTENT");

        List<JsonNode> rejoined = copilotKit(second + "/api/chat/copilotkit/agent/default/connect",
                copilotKitInput(threadId, null), null);
        assertThat(rejoined.get(0).get("type").asText()).isEqualTo("RUN_STARTED");
        assertThat(rejoined.get(1).get("messages")).extracting(m -> m.get("role").asText()).containsExactly("user");
        assertThat(rejoined.get(rejoined.size() - 1).get("type").asText()).isEqualTo("RUN_FINISHED");
        StringBuilder text = new StringBuilder();
        rejoined.stream().filter(e -> e.get("type").asText().equals("TEXT_MESSAGE_CONTENT"))
                .forEach(e -> text.append(e.get("delta").asText()));
        JsonNode view = ChatJson.shared().readTree(get(second + "/api/chat/sessions/" + threadId).body());
        JsonNode answer = null;
        for (JsonNode message : view.get("messages")) {
            if (message.get("type").asText().equals("assistant")) {
                answer = message;
            }
        }
        assertThat(answer.get("status").asText()).isEqualTo("COMPLETED");
        assertThat(text.toString()).as("the answer once, whole").isEqualTo(answer.get("text").asText());
    }

    /** A CopilotKit page's stop reaches the other instance, and the page's open run stream ends there. */
    @Test
    void aCopilotKitStopThroughTheOtherInstanceEndsTheOpenRunStream() throws Exception {
        String threadId = java.util.UUID.randomUUID().toString();
        HttpResponse<InputStream> run = HTTP.send(HttpRequest.newBuilder(
                URI.create(first + "/api/chat/copilotkit/agent/default/run")).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(copilotKitInput(threadId, "slow, then stop")))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofInputStream());
        List<String> types = new ArrayList<>();
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(run.body(), StandardCharsets.UTF_8))) {
            String line;
            boolean stopped = false;
            while ((line = reader.readLine()) != null) {
                if (!line.startsWith("data: ")) {
                    continue;
                }
                types.add(ChatJson.shared().readTree(line.substring(6)).get("type").asText());
                if (!stopped && types.get(types.size() - 1).equals("TEXT_MESSAGE_CONTENT")) {
                    stopped = true;
                    assertThat(post(second + "/api/chat/copilotkit/agent/default/stop/" + threadId, "{}")
                            .get("stopped").asBoolean()).isTrue();
                }
            }
        }
        assertThat(types.get(types.size() - 1)).as("the server ended the stream: " + types).isEqualTo("RUN_FINISHED");
        JsonNode view = ChatJson.shared().readTree(get(second + "/api/chat/sessions/" + threadId).body());
        assertThat(view.get("messages").toString()).contains("CANCELLED");
    }

    @Test
    void aRunStartedOnOneInstanceIsStoppedThroughTheOther() throws Exception {
        String session = post(second + "/api/chat/sessions", "{}").get("id").asText();
        String runId = post(second + "/api/chat/sessions/" + session + "/runs", "{\"message\":\"slow, then stop\"}")
                .get("runId").asText();
        readEvents(first + "/api/chat/runs/" + runId + "/stream", null, 6);
        post(first + "/api/chat/runs/" + runId + "/cancel", null);
        awaitStatus(first, runId, "CANCELLED");
        awaitStatus(second, runId, "CANCELLED");
    }

    /**
     * The CopilotKit example (the stock v2 chat) on a PostgreSQL the instances share: a page reloaded onto the
     * other instance mid-answer shows the answer once, to its end; after that instance restarts on the same
     * database, the page reloaded onto it has the thread back, and its next turn continues the thread.
     */
    @Test
    void theCopilotKitExampleFollowsItsThreadOntoTheOtherInstanceAndAcrossARestart() throws Exception {
        copilotKit.startBrowser();
        String threadId = java.util.UUID.randomUUID().toString();
        copilotKit.open(CopilotKitBrowser.V2, first, threadId);
        copilotKit.send("slow please");
        copilotKit.awaitAnswerStreaming();

        copilotKit.open(CopilotKitBrowser.V2, second, threadId);
        List<String> oneTurn = copilotKit.awaitConversation(1);
        assertThat(oneTurn).hasSize(2);
        String answer = copilotKit.answerOnPage();
        assertThat(answer.split("Simulated answer", -1)).as("the answer once: " + answer).hasSize(2);
        assertThat(answer).as("to its end").endsWith("every word is scripted.");

        restartSecond();
        copilotKit.open(CopilotKitBrowser.V2, second, threadId);
        assertThat(copilotKit.awaitConversation(1)).as("the thread back after the restart").isEqualTo(oneTurn);
        copilotKit.send("and again");
        List<String> twoTurns = copilotKit.awaitConversation(2);
        assertThat(twoTurns.subList(0, 2)).isEqualTo(oneTurn);
        assertThat(twoTurns.get(2)).isEqualTo("user: and again");
        JsonNode view = ChatJson.shared().readTree(get(first + "/api/chat/sessions/" + threadId).body());
        List<String> turns = new ArrayList<>();
        for (JsonNode message : view.get("messages")) {
            String type = message.get("type").asText();
            if (type.equals("user") || type.equals("assistant")) {
                turns.add(type + (type.equals("user") ? ": " + message.get("text").asText() : ""));
            }
        }
        assertThat(turns).as("one thread, continued")
                .containsExactly("user: slow please", "assistant", "user: and again", "assistant");
    }

    /** Stops the second instance and starts it again on the same database (another port: it picks its own). */
    private static void restartSecond() throws Exception {
        Process old = apps.get(1);
        old.destroy();
        if (!old.waitFor(20, TimeUnit.SECONDS)) {
            old.destroyForcibly();
        }
        apps.set(1, launch("b-restarted", postgres.getJdbcUrl("postgres", "postgres")));
        second = awaitUp("b-restarted", apps.get(1));
    }
}
