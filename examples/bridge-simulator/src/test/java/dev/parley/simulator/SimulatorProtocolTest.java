package dev.parley.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.runtime.RunRequest;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The simulator does what the protocol page says, seen with a plain HTTP client. */
class SimulatorProtocolTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOKEN = "sim-token-123456";
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void close() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
    }

    private BridgeSimulator start(SimulatorConfig.Builder config) throws Exception {
        BridgeSimulator simulator = BridgeSimulator.start(config.bearerToken(TOKEN).build());
        closeables.add(simulator);
        return simulator;
    }

    private HttpResponse<String> call(BridgeSimulator sim, String method, String path, String body, boolean auth)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(sim.baseUrl() + path)).timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (auth) {
            request.header("Authorization", "Bearer " + TOKEN);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Reads a stream's lines in the background. */
    private CompletableFuture<Void> follow(BridgeSimulator sim, String method, String path, String body, List<String> lines) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(sim.baseUrl() + path)).header("Authorization", "Bearer " + TOKEN)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofLines())
                .thenAccept(response -> response.body().forEach(lines::add));
    }

    @Test
    void healthIsOpenAndEverythingElseNeedsTheToken() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder());

        JsonNode health = JSON.readTree(call(sim, "GET", "/health", null, false).body());
        assertThat(health.path("protocol").asText()).isEqualTo("hermes-bridge/1");
        HttpResponse<String> denied = call(sim, "POST", "/run", "{\"runId\":\"r1\",\"userMessage\":\"hi\"}", false);
        assertThat(denied.statusCode()).isEqualTo(401);
        assertThat(JSON.readTree(denied.body()).path("error").path("code").asText()).isEqualTo("UNAUTHORIZED");
        HttpResponse<String> bad = call(sim, "POST", "/run", "{\"runId\":\"r1\"}", true);
        assertThat(bad.statusCode()).isEqualTo(400);
        assertThat(JSON.readTree(bad.body()).path("error").path("code").asText()).isEqualTo("INVALID_REQUEST");
        assertThat(call(sim, "GET", "/runs/nope", null, true).statusCode()).isEqualTo(404);
    }

    @Test
    void framesAreNumberedStampedAndEndWithOneDone() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder());

        String body = call(sim, "POST", "/run", "{\"runId\":\"r1\",\"userMessage\":\"use the tools\"}", true).body();

        List<JsonNode> frames = new ArrayList<>();
        long seq = 0;
        for (String block : body.split("\n\n")) {
            List<String> lines = block.lines().toList();
            assertThat(lines.get(0)).isEqualTo("id: " + (++seq));
            JsonNode data = JSON.readTree(lines.get(2).substring("data: ".length()));
            assertThat(lines.get(1)).isEqualTo("event: " + data.path("kind").asText());
            assertThat(data.path("seq").asLong()).isEqualTo(seq);
            assertThat(data.path("tsMicros").asLong() / 1000).isEqualTo(data.path("ts").asLong());
            frames.add(data);
        }
        assertThat(frames.get(0).path("kind").asText()).isEqualTo("run_started");
        assertThat(frames).filteredOn(f -> f.path("kind").asText().equals("done")).hasSize(1);
        assertThat(frames.get(frames.size() - 1).path("status").asText()).isEqualTo("completed");
        assertThat(frames.get(frames.size() - 2).path("kind").asText()).isEqualTo("final");

        String replay = call(sim, "GET", "/runs/r1/events?after=" + (seq - 2), null, true).body();
        assertThat(replay.split("\n\n")).hasSize(2);
        assertThat(call(sim, "POST", "/run", "{\"runId\":\"r1\",\"userMessage\":\"again\"}", true).statusCode()).isEqualTo(409);
    }

    @Test
    void aWaitingRunSendsHeartbeatsKeepsItsSessionBusyAndIsCancelledCleanly() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder().heartbeatInterval(Duration.ofMillis(100)));
        List<String> lines = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> stream = follow(sim, "POST", "/run",
                "{\"runId\":\"r1\",\"sessionId\":\"s1\",\"userMessage\":\"clarify\"}", lines);
        await(() -> lines.contains(": ping") && sim.runStatus("r1").orElse("").equals("waiting_for_clarification"));

        HttpResponse<String> busy = call(sim, "POST", "/run", "{\"runId\":\"r2\",\"sessionId\":\"s1\",\"userMessage\":\"x\"}", true);
        assertThat(busy.statusCode()).isEqualTo(409);
        assertThat(busy.body()).contains("SESSION_BUSY");
        JsonNode status = JSON.readTree(call(sim, "GET", "/runs/r1", null, true).body());
        assertThat(status.path("pendingClarify").path("clarifyId").asText()).isEqualTo("c1");

        assertThat(call(sim, "POST", "/runs/r1/cancel", null, true).statusCode()).isEqualTo(202);
        stream.get(5, TimeUnit.SECONDS);

        List<String> data = lines.stream().filter(l -> l.startsWith("data: ")).toList();
        assertThat(data.get(data.size() - 2)).contains("\"kind\":\"clarify_resolved\"").contains("\"outcome\":\"cancelled\"");
        assertThat(data.get(data.size() - 1)).contains("\"kind\":\"done\"").contains("\"status\":\"cancelled\"");
        assertThat(call(sim, "POST", "/runs/r1/cancel", null, true).body()).isEqualTo("{\"status\":\"cancelled\"}");
        assertThat(call(sim, "POST", "/runs/r1/clarify", "{\"clarifyId\":\"c1\",\"answer\":\"Markdown\"}", true)
                .statusCode()).isEqualTo(409);
        assertThat(call(sim, "POST", "/run", "{\"runId\":\"r3\",\"sessionId\":\"s1\",\"userMessage\":\"x\"}", true)
                .statusCode()).isEqualTo(200);
    }

    @Test
    void aStrictBridgeRefusesUnknownSessions() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder().strictSessions(true));

        HttpResponse<String> gone = call(sim, "POST", "/run", "{\"runId\":\"r1\",\"sessionId\":\"old\",\"userMessage\":\"x\"}",
                true);

        assertThat(gone.statusCode()).isEqualTo(410);
        assertThat(gone.body()).contains("SESSION_NOT_FOUND");
    }

    @Test
    void aLongStreamArrivesWholeThroughTheAdapter() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder());
        HermesRuntimeAdapter adapter = new HermesRuntimeAdapter(HermesConfig.builder().baseUrl(sim.baseUrl())
                .bearerToken(TOKEN).build());
        closeables.add(0, adapter);
        List<AgentStreamEvent> events = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> done = new CompletableFuture<>();
        adapter.generateResponse(new RunRequest("t1", "r1", "alice", "a1", "long 20000", null, null, null, null, null, null))
                .subscribe(new Flow.Subscriber<>() {
                    @Override
                    public void onSubscribe(Flow.Subscription s) {
                        s.request(Long.MAX_VALUE);
                    }

                    @Override
                    public void onNext(AgentStreamEvent item) {
                        events.add(item);
                    }

                    @Override
                    public void onError(Throwable t) {
                        done.completeExceptionally(t);
                    }

                    @Override
                    public void onComplete() {
                        done.complete(null);
                    }
                });
        done.get(30, TimeUnit.SECONDS);

        List<AgentStreamEvent.TextDelta> deltas = events.stream().filter(e -> e instanceof AgentStreamEvent.TextDelta)
                .map(e -> (AgentStreamEvent.TextDelta) e).toList();
        assertThat(deltas).hasSize(20_000);
        String whole = ((AgentStreamEvent.TextFinal) events.get(events.size() - 2)).text();
        assertThat(deltas.stream().map(AgentStreamEvent.TextDelta::delta).collect(Collectors.joining())).isEqualTo(whole);
        assertThat(events.get(events.size() - 1)).isInstanceOf(AgentStreamEvent.RunFinished.class);
    }

    private static void await(java.util.function.BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out");
            }
            Thread.sleep(10);
        }
    }
}
