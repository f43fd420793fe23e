package dev.parley.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.testing.StreamCollector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
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
        if (method.equals("POST")) {
            request.header("Content-Type", "application/json");
        }
        if (auth) {
            request.header("Authorization", "Bearer " + TOKEN);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Reads a stream's lines in the background. */
    private CompletableFuture<Void> follow(BridgeSimulator sim, String method, String path, String body, List<String> lines) {
        HttpRequest request = HttpRequest.newBuilder(URI.create(sim.baseUrl() + path)).header("Authorization", "Bearer " + TOKEN)
                .header("Content-Type", "application/json").method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofLines())
                .thenAccept(response -> response.body().forEach(lines::add));
    }

    @Test
    void healthIsOpenAndEverythingElseNeedsTheToken() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder());

        JsonNode health = JSON.readTree(call(sim, "GET", "/health", null, false).body());
        assertThat(health.path("protocol").asText()).isEqualTo("hermes-bridge/1");
        assertThat(health.path("capabilities")).extracting(JsonNode::asText).contains("approvals");
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
        assertThat(call(sim, "GET", "/runs/r1/events?after=-1", null, true).statusCode()).isEqualTo(400);
        assertThat(call(sim, "GET", "/runs/r1/events?after=x", null, true).statusCode()).isEqualTo(400);
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
        String clarifyId = status.path("pendingClarify").path("clarifyId").asText();
        assertThat(clarifyId).startsWith("c-");

        assertThat(call(sim, "POST", "/runs/r1/cancel", null, true).statusCode()).isEqualTo(202);
        stream.get(5, TimeUnit.SECONDS);

        List<String> data = lines.stream().filter(l -> l.startsWith("data: ")).toList();
        assertThat(data.get(data.size() - 2)).contains("\"kind\":\"clarify_resolved\"").contains("\"outcome\":\"cancelled\"");
        assertThat(data.get(data.size() - 1)).contains("\"kind\":\"done\"").contains("\"status\":\"cancelled\"");
        assertThat(call(sim, "POST", "/runs/r1/cancel", null, true).body()).isEqualTo("{\"status\":\"cancelled\"}");
        assertThat(call(sim, "POST", "/runs/r1/clarify", "{\"clarifyId\":\"" + clarifyId + "\",\"answer\":\"Markdown\"}", true)
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
    void aRunThatBringsTheConversationIsAcceptedAndRecorded() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder());

        HttpResponse<String> answer = call(sim, "POST", "/run", "{\"runId\":\"r1\",\"sessionId\":null,\"userMessage\":\"x\","
                + "\"clientCapabilities\":[\"approvals\",\"history\"],\"history\":[{\"role\":\"user\",\"text\":\"hi\"},"
                + "{\"role\":\"assistant\",\"text\":\"hello\"}]}", true);

        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(answer.body()).contains("\"kind\":\"done\"");
        assertThat(sim.request("r1").orElseThrow().historyEntries()).isEqualTo(2);
    }

    // ------------------------------------------------------------------ approvals (protocol section 10)

    private static final String APPROVE = "\"userMessage\":\"please approve the cleanup\",\"clientCapabilities\":[\"approvals\"]";

    private static String approveRun(String runId, String threadId) {
        return "{\"runId\":\"" + runId + "\",\"threadId\":\"" + threadId + "\"," + APPROVE + "}";
    }

    private static List<JsonNode> frames(List<String> lines) throws Exception {
        List<JsonNode> frames = new ArrayList<>();
        for (String line : lines) {
            if (line.startsWith("data: ")) {
                frames.add(JSON.readTree(line.substring("data: ".length())));
            }
        }
        return frames;
    }

    private static JsonNode frame(List<JsonNode> frames, String kind) {
        return frames.stream().filter(f -> f.path("kind").asText().equals(kind)).findFirst()
                .orElseThrow(() -> new AssertionError("no " + kind + " frame in " + frames));
    }

    private int decide(BridgeSimulator sim, String runId, String approvalId, String decision) throws Exception {
        return call(sim, "POST", "/runs/" + runId + "/approval",
                "{\"approvalId\":\"" + approvalId + "\",\"decision\":\"" + decision + "\"}", true).statusCode();
    }

    /** The id of the approval the run waits for, from {@code GET /runs/{id}}. */
    private String pendingApprovalId(BridgeSimulator sim, String runId) throws Exception {
        String approvalId = JSON.readTree(call(sim, "GET", "/runs/" + runId, null, true).body()).path("pendingApproval")
                .path("approvalId").asText();
        assertThat(approvalId).as("the pending approval of " + runId).startsWith("a-");
        return approvalId;
    }

    private HttpResponse<String> expire(BridgeSimulator sim, String runId, String approvalId) throws Exception {
        return call(sim, "POST", "/runs/" + runId + "/approval/expire", "{\"approvalId\":\"" + approvalId + "\"}", true);
    }

    /** Starts an approval run and waits until it asks. */
    private CompletableFuture<Void> startWaiting(BridgeSimulator sim, String runId, String threadId, List<String> lines)
            throws Exception {
        CompletableFuture<Void> stream = follow(sim, "POST", "/run", approveRun(runId, threadId), lines);
        await(() -> sim.runStatus(runId).orElse("").equals("waiting_for_approval"));
        return stream;
    }

    @Test
    void anApprovalIsAskedAndItsDecisionIsTakenOnceIdempotently() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder().approvalTimeout(Duration.ofSeconds(30)));
        List<String> lines = new CopyOnWriteArrayList<>();
        long before = System.currentTimeMillis();
        CompletableFuture<Void> stream = startWaiting(sim, "r1", "t1", lines);

        JsonNode pending = JSON.readTree(call(sim, "GET", "/runs/r1", null, true).body());
        assertThat(pending.path("status").asText()).isEqualTo("waiting_for_approval");
        JsonNode asked = pending.path("pendingApproval");
        String a1 = asked.path("approvalId").asText();
        assertThat(a1).startsWith("a-");
        assertThat(asked.path("toolName").asText()).isEqualTo("terminal");
        assertThat(asked.path("command").asText()).isEqualTo("rm -rf ./build/tmp-sim");
        assertThat(asked.path("patternKey").asText()).isEqualTo("recursive delete");
        assertThat(asked.path("choices")).extracting(JsonNode::asText).containsExactly("once", "session", "always", "deny");
        assertThat(asked.path("expiresAt").asLong()).isBetween(before + 30_000, System.currentTimeMillis() + 30_000);

        assertThat(decide(sim, "r1", a1, "maybe")).isEqualTo(400);
        HttpResponse<String> unknown = call(sim, "POST", "/runs/r1/approval", "{\"approvalId\":\"zz\",\"decision\":\"once\"}",
                true);
        assertThat(unknown.statusCode()).isEqualTo(404);
        assertThat(unknown.body()).contains("APPROVAL_NOT_FOUND");
        assertThat(decide(sim, "nope", a1, "once")).isEqualTo(404);
        HttpResponse<String> taken = call(sim, "POST", "/runs/r1/approval", "{\"approvalId\":\"" + a1 + "\",\"decision\":\"once\"}",
                true);
        assertThat(taken.statusCode()).isEqualTo(200);
        assertThat(taken.body()).isEqualTo("{\"accepted\":true,\"replayed\":false}");
        stream.get(5, TimeUnit.SECONDS);

        HttpResponse<String> again = call(sim, "POST", "/runs/r1/approval", "{\"approvalId\":\"" + a1 + "\",\"decision\":\"once\"}",
                true);
        assertThat(again.statusCode()).as("the same decision, after the run ended").isEqualTo(200);
        assertThat(again.body()).isEqualTo("{\"accepted\":true,\"replayed\":true}");
        HttpResponse<String> other = call(sim, "POST", "/runs/r1/approval", "{\"approvalId\":\"" + a1 + "\",\"decision\":\"deny\"}",
                true);
        assertThat(other.statusCode()).isEqualTo(409);
        assertThat(other.body()).contains("APPROVAL_NOT_PENDING");
        assertThat(expire(sim, "r1", a1).statusCode()).isEqualTo(409);

        List<JsonNode> frames = frames(lines);
        assertThat(frames).extracting(f -> f.path("kind").asText()).containsSubsequence("tool_call", "approval_request",
                "approval_resolved", "tool_result", "final", "done");
        assertThat(frame(frames, "approval_request").path("description").asText()).isEqualTo("recursive delete (simulated)");
        assertThat(frame(frames, "approval_request").path("toolCallId").asText()).as("the call it holds up")
                .isEqualTo(frame(frames, "tool_call").path("toolCallId").asText()).startsWith("t-");
        JsonNode resolved = frame(frames, "approval_resolved");
        assertThat(resolved.path("outcome").asText()).isEqualTo("answered");
        assertThat(resolved.path("decision").asText()).isEqualTo("once");
        assertThat(frame(frames, "tool_result").path("isError").asBoolean()).isFalse();
        assertThat(frame(frames, "done").path("status").asText()).isEqualTo("completed");
    }

    @Test
    void anExpiryEndsTheWaitAsHermesTimeoutWouldAndIsIdempotent() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder().approvalTimeout(Duration.ofSeconds(30)));
        List<String> lines = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> stream = startWaiting(sim, "r1", "t1", lines);
        String a1 = pendingApprovalId(sim, "r1");

        HttpResponse<String> expired = expire(sim, "r1", a1);
        assertThat(expired.body()).isEqualTo("{\"accepted\":true,\"replayed\":false}");
        stream.get(5, TimeUnit.SECONDS);

        assertThat(expire(sim, "r1", a1).body())
                .isEqualTo("{\"accepted\":true,\"replayed\":true}");
        assertThat(decide(sim, "r1", a1, "once")).isEqualTo(409);
        List<JsonNode> frames = frames(lines);
        assertThat(frame(frames, "approval_resolved").path("outcome").asText()).isEqualTo("expired");
        assertThat(frame(frames, "approval_resolved").path("decision").isNull()).isTrue();
        assertThat(frame(frames, "tool_result").path("result").asText()).startsWith("BLOCKED: the approval timed out");
        assertThat(frame(frames, "tool_result").path("isError").asBoolean()).isTrue();
        assertThat(frame(frames, "final").path("text").asText()).startsWith("Nobody approved");
    }

    @Test
    void theBridgesOwnTimeoutExpiresAnUnansweredApproval() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder().approvalTimeout(Duration.ofMillis(200)));

        String body = call(sim, "POST", "/run", approveRun("r1", "t1"), true).body();

        List<JsonNode> frames = frames(body.lines().toList());
        JsonNode asked = frame(frames, "approval_request");
        JsonNode resolved = frame(frames, "approval_resolved");
        assertThat(resolved.path("outcome").asText()).isEqualTo("expired");
        assertThat(resolved.path("ts").asLong()).isGreaterThanOrEqualTo(asked.path("expiresAt").asLong());
        assertThat(frame(frames, "done").path("status").asText()).isEqualTo("completed");
    }

    @Test
    void aCancelWithdrawsAPendingApproval() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder());
        List<String> lines = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> stream = startWaiting(sim, "r1", "t1", lines);
        String a1 = pendingApprovalId(sim, "r1");

        assertThat(call(sim, "POST", "/runs/r1/cancel", null, true).statusCode()).isEqualTo(202);
        stream.get(5, TimeUnit.SECONDS);

        List<JsonNode> frames = frames(lines);
        assertThat(frames.get(frames.size() - 2).path("kind").asText()).isEqualTo("approval_resolved");
        assertThat(frames.get(frames.size() - 2).path("outcome").asText()).isEqualTo("cancelled");
        assertThat(frames.get(frames.size() - 1).path("status").asText()).isEqualTo("cancelled");
        assertThat(decide(sim, "r1", a1, "once")).isEqualTo(409);
        assertThat(JSON.readTree(call(sim, "GET", "/runs/r1", null, true).body()).path("pendingApproval").isNull()).isTrue();
    }

    @Test
    void aClientThatCannotAnswerApprovalsIsNeverAsked() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder());

        String body = call(sim, "POST", "/run", "{\"runId\":\"r1\",\"userMessage\":\"please approve the cleanup\"}", true)
                .body();

        List<JsonNode> frames = frames(body.lines().toList());
        assertThat(frames).noneMatch(f -> f.path("kind").asText().startsWith("approval_"));
        assertThat(frame(frames, "status").path("level").asText()).isEqualTo("warn");
        assertThat(frame(frames, "tool_result").path("result").asText()).startsWith("BLOCKED");
        assertThat(frame(frames, "done").path("status").asText()).isEqualTo("completed");
    }

    @Test
    void sessionAndAlwaysDecisionsAreRememberedAsHermesRemembersThem() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder());
        List<String> lines = new CopyOnWriteArrayList<>();
        CompletableFuture<Void> first = startWaiting(sim, "r1", "t1", lines);
        assertThat(decide(sim, "r1", pendingApprovalId(sim, "r1"), "session")).isEqualTo(200);
        first.get(5, TimeUnit.SECONDS);

        String sameThread = call(sim, "POST", "/run", approveRun("r2", "t1"), true).body();
        assertThat(sameThread).doesNotContain("approval_request").contains("It was approved earlier");
        CompletableFuture<Void> otherThread = startWaiting(sim, "r3", "t2", new CopyOnWriteArrayList<>());
        assertThat(decide(sim, "r3", pendingApprovalId(sim, "r3"), "always")).isEqualTo(200);
        otherThread.get(5, TimeUnit.SECONDS);

        sim.forgetSessions();
        assertThat(call(sim, "POST", "/run", approveRun("r4", "t9"), true).body()).as("always outlives a restart")
                .doesNotContain("approval_request").contains("It was approved earlier");
    }

    @Test
    void aLongStreamArrivesWholeThroughTheAdapter() throws Exception {
        BridgeSimulator sim = start(SimulatorConfig.builder());
        HermesRuntimeAdapter adapter = new HermesRuntimeAdapter(HermesConfig.builder().baseUrl(sim.baseUrl())
                .bearerToken(TOKEN).build());
        closeables.add(0, adapter);
        List<AgentStreamEvent> events = StreamCollector.collect(adapter.generateResponse(
                new RunRequest("t1", "r1", "alice", "a1", "long 20000", null, null, null, null, null, null)));

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
