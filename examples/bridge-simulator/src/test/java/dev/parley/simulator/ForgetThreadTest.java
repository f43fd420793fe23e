package dev.parley.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@code DELETE /threads/{threadId}} (protocol section 12), over loopback HTTP. */
class ForgetThreadTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOKEN = "forget-token-0123456789";
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<BridgeSimulator> simulators = new ArrayList<>();

    @AfterEach
    void close() {
        simulators.forEach(BridgeSimulator::close);
    }

    private BridgeSimulator start(SimulatorConfig.Builder config) throws Exception {
        BridgeSimulator simulator = BridgeSimulator.start(config.bearerToken(TOKEN).build());
        simulators.add(simulator);
        return simulator;
    }

    private HttpRequest request(BridgeSimulator sim, String method, String path, String body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(sim.baseUrl() + path)).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + TOKEN)
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (method.equals("POST")) {
            request.header("Content-Type", "application/json");
        }
        return request.build();
    }

    private HttpResponse<String> call(BridgeSimulator sim, String method, String path, String body) throws Exception {
        return http.send(request(sim, method, path, body), HttpResponse.BodyHandlers.ofString());
    }

    private HttpResponse<String> forget(BridgeSimulator sim, String encodedThreadId) throws Exception {
        return call(sim, "DELETE", "/threads/" + encodedThreadId, null);
    }

    private static String approveRun(String runId, String threadId) {
        return "{\"runId\":\"" + runId + "\",\"threadId\":\"" + threadId + "\",\"userMessage\":\"please approve the cleanup\","
                + "\"clientCapabilities\":[\"approvals\"]}";
    }

    /** Starts a run in the background; gives its whole stream once it ends. */
    private CompletableFuture<String> follow(BridgeSimulator sim, String body) {
        return http.sendAsync(request(sim, "POST", "/run", body), HttpResponse.BodyHandlers.ofString())
                .thenApply(HttpResponse::body);
    }

    /** Runs the approve scenario in the thread and decides its approval; gives the stream. */
    private String approved(BridgeSimulator sim, String runId, String threadId, String decision) throws Exception {
        CompletableFuture<String> stream = follow(sim, approveRun(runId, threadId));
        await(() -> sim.runStatus(runId).orElse("").equals("waiting_for_approval"));
        String approvalId = JSON.readTree(call(sim, "GET", "/runs/" + runId, null).body()).path("pendingApproval")
                .path("approvalId").asText();
        assertThat(call(sim, "POST", "/runs/" + runId + "/approval",
                "{\"approvalId\":\"" + approvalId + "\",\"decision\":\"" + decision + "\"}").statusCode()).isEqualTo(200);
        return stream.get(10, TimeUnit.SECONDS);
    }

    /** True if the run asked an approval; a run that asks is cancelled at once. */
    private boolean asks(BridgeSimulator sim, String runId, String threadId) throws Exception {
        CompletableFuture<String> stream = follow(sim, approveRun(runId, threadId));
        await(() -> sim.runStatus(runId).map(s -> s.equals("waiting_for_approval") || s.equals("completed")).orElse(false));
        call(sim, "POST", "/runs/" + runId + "/cancel", null);
        return stream.get(10, TimeUnit.SECONDS).contains("\"kind\":\"approval_request\"");
    }

    @Test
    void aCommandApprovedForTheConversationIsAskedAgainAfterTheThreadIsDeleted() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder());
        approved(sim, "x1", "thread-x", "session");
        approved(sim, "y1", "thread-y", "session");
        assertThat(asks(sim, "x2", "thread-x")).as("approved for thread X before the delete").isFalse();

        HttpResponse<String> deleted = forget(sim, "thread-x");

        assertThat(deleted.statusCode()).isEqualTo(204);
        assertThat(deleted.body()).isEmpty();
        assertThat(asks(sim, "x3", "thread-x")).as("asked again after DELETE /threads/thread-x").isTrue();
        assertThat(asks(sim, "y2", "thread-y")).as("another conversation keeps its approval").isFalse();
    }

    @Test
    void theThreadsRunsAreCancelledAndForgottenAndOtherThreadsKeepTheirs() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder());
        String done = call(sim, "POST", "/run", "{\"runId\":\"x1\",\"threadId\":\"thread-x\",\"userMessage\":\"hi\"}").body();
        CompletableFuture<String> waiting = follow(sim,
                "{\"runId\":\"x2\",\"threadId\":\"thread-x\",\"sessionId\":null,\"userMessage\":\"clarify please\"}");
        await(() -> sim.runStatus("x2").orElse("").equals("waiting_for_clarification"));
        call(sim, "POST", "/run", "{\"runId\":\"y1\",\"threadId\":\"thread-y\",\"userMessage\":\"hi\"}");
        assertThat(done).contains("\"kind\":\"done\"");

        assertThat(forget(sim, "thread-x").statusCode()).isEqualTo(204);

        String stream = waiting.get(10, TimeUnit.SECONDS);
        List<String> kinds = stream.lines().filter(l -> l.startsWith("event: ")).toList();
        assertThat(kinds).endsWith("event: clarify_resolved", "event: done");
        assertThat(stream).contains("\"outcome\":\"cancelled\"", "\"status\":\"cancelled\"");
        for (String runId : List.of("x1", "x2")) {
            HttpResponse<String> status = call(sim, "GET", "/runs/" + runId, null);
            assertThat(status.statusCode()).as(runId).isEqualTo(404);
            assertThat(JSON.readTree(status.body()).path("error").path("code").asText()).isEqualTo("RUN_NOT_FOUND");
            assertThat(call(sim, "GET", "/runs/" + runId + "/events?after=0", null).statusCode()).isEqualTo(404);
            assertThat(sim.request(runId)).as("what " + runId + " brought").isEmpty();
            assertThat(sim.streamsOpened(runId)).isZero();
        }
        assertThat(call(sim, "GET", "/runs/y1", null).statusCode()).isEqualTo(200);
        assertThat(sim.request("y1")).isPresent();
        assertThat(JSON.readTree(call(sim, "GET", "/health", null).body()).path("activeRuns").asInt()).isZero();
        assertThat(call(sim, "POST", "/run", "{\"runId\":\"x3\",\"threadId\":\"thread-x\",\"userMessage\":\"hi\"}").body())
                .as("the thread takes a new run").contains("\"status\":\"completed\"");
    }

    @Test
    void theThreadsSessionsAreDropped() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder().strictSessions(true));
        String x = sessionOf(call(sim, "POST", "/run", "{\"runId\":\"x1\",\"threadId\":\"thread-x\",\"userMessage\":\"rotate\"}")
                .body());
        String y = sessionOf(call(sim, "POST", "/run", "{\"runId\":\"y1\",\"threadId\":\"thread-y\",\"userMessage\":\"hi\"}")
                .body());

        assertThat(forget(sim, "thread-x").statusCode()).isEqualTo(204);

        HttpResponse<String> gone = call(sim, "POST", "/run",
                "{\"runId\":\"x2\",\"threadId\":\"thread-x\",\"sessionId\":\"" + x + "\",\"userMessage\":\"hi\"}");
        assertThat(gone.statusCode()).as("the rotated session of the deleted thread").isEqualTo(410);
        assertThat(gone.body()).contains("SESSION_NOT_FOUND");
        assertThat(call(sim, "POST", "/run", "{\"runId\":\"y2\",\"threadId\":\"thread-y\",\"sessionId\":\"" + y
                + "\",\"userMessage\":\"hi\"}").statusCode()).isEqualTo(200);
    }

    /** The session a run ended in (after a rotation, the new one). */
    private static String sessionOf(String stream) throws Exception {
        String done = stream.lines().filter(l -> l.startsWith("data: ") && l.contains("\"kind\":\"done\"")).findFirst()
                .orElseThrow();
        return JSON.readTree(done.substring(6)).path("hermesSessionId").asText();
    }

    @Test
    void anUnknownThreadTwiceAndAnEncodedIdAreFine() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder());
        call(sim, "POST", "/run", "{\"runId\":\"s1\",\"threadId\":\"team/7@1700000000000\",\"userMessage\":\"hi\"}");

        assertThat(forget(sim, "never-seen").statusCode()).isEqualTo(204);
        assertThat(forget(sim, "never-seen").statusCode()).isEqualTo(204);
        assertThat(forget(sim, "team%2F7%401700000000000").statusCode()).isEqualTo(204);
        assertThat(sim.runStatus("s1")).as("the thread id is one path segment, percent-decoded").isEmpty();
        assertThat(forget(sim, "team%2F7%401700000000000").statusCode()).as("idempotent").isEqualTo(204);

        HttpResponse<String> blank = forget(sim, "%20");
        assertThat(blank.statusCode()).isEqualTo(400);
        assertThat(blank.body()).contains("INVALID_REQUEST");
        HttpResponse<String> wrongMethod = call(sim, "GET", "/threads/never-seen", null);
        assertThat(wrongMethod.statusCode()).isEqualTo(405);
        assertThat(wrongMethod.headers().firstValue("Allow")).contains("DELETE");
    }

    @Test
    void withoutTheTokenNothingIsForgotten() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder());
        call(sim, "POST", "/run", "{\"runId\":\"x1\",\"threadId\":\"thread-x\",\"userMessage\":\"hi\"}");

        HttpResponse<String> refused = http.send(HttpRequest.newBuilder(URI.create(sim.baseUrl() + "/threads/thread-x"))
                .DELETE().header("Authorization", "Bearer wrong").build(), HttpResponse.BodyHandlers.ofString());

        assertThat(refused.statusCode()).isEqualTo(401);
        assertThat(sim.runStatus("x1")).contains("completed");
    }

    @Test
    void concurrentDeletesAndStartsLeaveNoRunOfTheThreadBehind() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder().slowEventsPerSecond(50));
        CompletableFuture<String> slow = follow(sim, "{\"runId\":\"x0\",\"threadId\":\"thread-x\",\"userMessage\":\"slow\"}");
        await(() -> sim.runStatus("x0").isPresent());
        ExecutorService pool = Executors.newFixedThreadPool(8);
        CountDownLatch go = new CountDownLatch(1);
        List<Future<Integer>> answers = new ArrayList<>();
        try {
            for (int i = 0; i < 8; i++) {
                String runId = "x" + (i + 1);
                Callable<Integer> task = i % 2 == 0
                        ? () -> {
                            go.await();
                            return forget(sim, "thread-x").statusCode();
                        }
                        : () -> {
                            go.await();
                            return call(sim, "POST", "/run", "{\"runId\":\"" + runId
                                    + "\",\"threadId\":\"thread-x\",\"userMessage\":\"hi\"}").statusCode();
                        };
                answers.add(pool.submit(task));
            }
            go.countDown();
            for (int i = 0; i < answers.size(); i++) {
                assertThat(answers.get(i).get(30, TimeUnit.SECONDS)).as("call %d", i).isIn(i % 2 == 0 ? List.of(204)
                        : List.of(200, 409));
            }
        } finally {
            pool.shutdownNow();
        }
        assertThat(slow.get(10, TimeUnit.SECONDS)).contains("\"status\":\"cancelled\"");

        assertThat(forget(sim, "thread-x").statusCode()).isEqualTo(204);
        for (int i = 0; i <= 8; i++) {
            assertThat(sim.runStatus("x" + i)).as("x%d after the last delete", i).isEmpty();
        }
        assertThat(JSON.readTree(call(sim, "GET", "/health", null).body()).path("activeRuns").asInt()).isZero();
        assertThat(call(sim, "POST", "/run", "{\"runId\":\"x9\",\"threadId\":\"thread-x\",\"userMessage\":\"hi\"}")
                .statusCode()).as("the thread is free again").isEqualTo(200);
    }

    private static void await(BooleanSupplier condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out");
            }
            Thread.sleep(10);
        }
    }
}
