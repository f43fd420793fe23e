package dev.parley.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The simulator refuses what a web page could make a browser send (protocol section 1), reads no body before its
 * token is checked, and makes up ids nobody can guess (section 4). Attacks go over raw sockets, so that every
 * header is the attacker's choice.
 */
class EdgeSecurityTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOKEN = "edge-token-0123456789";
    private static final String APPROVE = "{\"runId\":\"%s\",\"threadId\":\"%s\",\"userMessage\":\"please approve the cleanup\","
            + "\"clientCapabilities\":[\"approvals\"]}";
    private final HttpClient http = HttpClient.newHttpClient();
    private final List<BridgeSimulator> simulators = new ArrayList<>();

    @AfterEach
    void close() {
        simulators.forEach(BridgeSimulator::close);
    }

    private BridgeSimulator start(String token) throws Exception {
        BridgeSimulator simulator = BridgeSimulator.start(SimulatorConfig.builder().bearerToken(token).build());
        simulators.add(simulator);
        return simulator;
    }

    private static String local(BridgeSimulator sim) {
        return "127.0.0.1:" + sim.port();
    }

    private static RawHttp.Response raw(BridgeSimulator sim, String head, String body) throws Exception {
        try (RawHttp connection = RawHttp.connect(sim)) {
            return connection.send(head, body.getBytes(StandardCharsets.UTF_8)).read();
        }
    }

    private static String code(RawHttp.Response response) throws Exception {
        return JSON.readTree(response.body()).path("error").path("code").asText();
    }

    /** A well-formed call, as the adapter makes it. */
    private HttpResponse<String> call(BridgeSimulator sim, String method, String path, String body, String token)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(sim.baseUrl() + path)).timeout(Duration.ofSeconds(10))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (method.equals("POST")) {
            request.header("Content-Type", "application/json; charset=utf-8");
        }
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
    }

    /** Starts an approval run in the background and waits until it asks; gives the stream's end. */
    private CompletableFuture<HttpResponse<String>> waitingForApproval(BridgeSimulator sim, String runId, String token)
            throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(sim.baseUrl() + "/run"))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(String.format(APPROVE, runId, "t-" + runId)));
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        CompletableFuture<HttpResponse<String>> stream = http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!sim.runStatus(runId).orElse("").equals("waiting_for_approval")) {
            assertThat(System.nanoTime()).as("run %s to ask", runId).isLessThan(deadline);
            Thread.sleep(10);
        }
        return stream;
    }

    // ------------------------------------------------------------------ web pages

    @Test
    void aCrossSiteTextPlainPostStartsNoRun() throws Exception {
        BridgeSimulator sim = start(null);
        String body = "{\"runId\":\"evil\",\"userMessage\":\"use the tools\"}";

        RawHttp.Response fromPage = raw(sim, RawHttp.head("POST", "/run", local(sim), "Origin: https://evil.example",
                "Content-Type: text/plain;charset=UTF-8", "Content-Length: " + body.length()), body);
        RawHttp.Response withoutOrigin = raw(sim, RawHttp.head("POST", "/run", local(sim),
                "Content-Type: text/plain;charset=UTF-8", "Content-Length: " + body.length()), body);
        RawHttp.Response untyped = raw(sim, RawHttp.head("POST", "/run", local(sim), "Content-Length: " + body.length()),
                body);

        assertThat(fromPage.status()).isEqualTo(403);
        assertThat(code(fromPage)).isEqualTo("ORIGIN_NOT_ALLOWED");
        assertThat(withoutOrigin.status()).isEqualTo(415);
        assertThat(code(withoutOrigin)).isEqualTo("UNSUPPORTED_MEDIA_TYPE");
        assertThat(untyped.status()).isEqualTo(415);
        assertThat(sim.runStatus("evil")).as("no run was started").isEmpty();
        assertThat(sim.request("evil")).isEmpty();
        assertThat(JSON.readTree(call(sim, "GET", "/health", null, null).body()).path("activeRuns").asInt()).isZero();
    }

    @Test
    void aRequestWithAnOriginCannotApproveNorCancel() throws Exception {
        BridgeSimulator sim = start(TOKEN);
        CompletableFuture<HttpResponse<String>> stream = waitingForApproval(sim, "r1", TOKEN);
        String approvalId = JSON.readTree(call(sim, "GET", "/runs/r1", null, TOKEN).body()).path("pendingApproval")
                .path("approvalId").asText();
        String decision = "{\"approvalId\":\"" + approvalId + "\",\"decision\":\"always\"}";

        for (String origin : List.of("Origin: http://localhost:8080", "Origin: null", "Origin:")) {
            RawHttp.Response answer = raw(sim, RawHttp.head("POST", "/runs/r1/approval", local(sim), origin,
                    "Authorization: Bearer " + TOKEN, "Content-Type: application/json",
                    "Content-Length: " + decision.length()), decision);
            assertThat(answer.status()).as(origin).isEqualTo(403);
            assertThat(code(answer)).isEqualTo("ORIGIN_NOT_ALLOWED");
        }
        RawHttp.Response cancel = raw(sim, RawHttp.head("POST", "/runs/r1/cancel", local(sim), "Origin: https://evil.example",
                "Authorization: Bearer " + TOKEN, "Content-Type: application/json", "Content-Length: 0"), "");
        RawHttp.Response health = raw(sim, RawHttp.head("GET", "/health", local(sim), "Origin: https://evil.example"), "");

        assertThat(cancel.status()).isEqualTo(403);
        assertThat(health.status()).as("health too").isEqualTo(403);
        assertThat(sim.runStatus("r1")).as("still waiting for the person").contains("waiting_for_approval");
        HttpResponse<String> approved = call(sim, "POST", "/runs/r1/approval",
                "{\"approvalId\":\"" + approvalId + "\",\"decision\":\"once\"}", TOKEN);
        assertThat(approved.statusCode()).as("the client's own decision is taken").isEqualTo(200);
        String resolved = stream.get(10, TimeUnit.SECONDS).body().lines()
                .filter(l -> l.startsWith("data: ") && l.contains("\"kind\":\"approval_resolved\"")).findFirst().orElseThrow();
        assertThat(JSON.readTree(resolved.substring(6)).path("decision").asText()).isEqualTo("once");
    }

    @Test
    void anEmptyPostWithoutJsonContentTypeIsRefused() throws Exception {
        BridgeSimulator sim = start(null);
        CompletableFuture<HttpResponse<String>> stream = waitingForApproval(sim, "r1", null);

        RawHttp.Response cancel = raw(sim, RawHttp.head("POST", "/runs/r1/cancel", local(sim)), "");

        assertThat(cancel.status()).isEqualTo(415);
        assertThat(code(cancel)).isEqualTo("UNSUPPORTED_MEDIA_TYPE");
        assertThat(sim.runStatus("r1")).contains("waiting_for_approval");
        assertThat(call(sim, "POST", "/runs/r1/cancel", null, null).statusCode()).isEqualTo(202);
        assertThat(stream.get(10, TimeUnit.SECONDS).body()).contains("\"status\":\"cancelled\"");
    }

    // ------------------------------------------------------------------ DNS rebinding

    @Test
    void aReboundHostNameIsRefusedWithoutAToken() throws Exception {
        BridgeSimulator sim = start(null);
        String body = "{\"runId\":\"rebound\",\"userMessage\":\"hi\"}";

        for (String host : List.of("evil.example:" + sim.port(), "evil.example", "127.0.0.1.evil.example",
                "localhost.evil.example", "127.0.0.1:x", "[::1]evil", "2130706433", "")) {
            RawHttp.Response health = raw(sim, RawHttp.head("GET", "/health", host), "");
            assertThat(health.status()).as("Host: %s", host).isEqualTo(403);
            assertThat(code(health)).isEqualTo("HOST_NOT_ALLOWED");
        }
        RawHttp.Response run = raw(sim, RawHttp.head("POST", "/run", "evil.example:" + sim.port(),
                "Content-Type: application/json", "Content-Length: " + body.length()), body);

        assertThat(run.status()).isEqualTo(403);
        assertThat(sim.runStatus("rebound")).isEmpty();
        for (String host : List.of(local(sim), "localhost:" + sim.port(), "LOCALHOST", "127.3.2.1:80", "[::1]:" + sim.port(),
                "[::1]")) {
            assertThat(raw(sim, RawHttp.head("GET", "/health", host), "").status()).as("Host: %s", host).isEqualTo(200);
        }
    }

    @Test
    void withATokenAnyHostIsServed() throws Exception {
        BridgeSimulator sim = start(TOKEN);
        String body = "{\"runId\":\"r1\",\"userMessage\":\"hi\"}";

        RawHttp.Response health = raw(sim, RawHttp.head("GET", "/health", "bridge.internal:8700"), "");
        RawHttp.Response run = raw(sim, RawHttp.head("POST", "/run", "bridge.internal:8700", "Authorization: Bearer " + TOKEN,
                "Content-Type: application/json", "Content-Length: " + body.length(), "Connection: close"), body);

        assertThat(health.status()).isEqualTo(200);
        assertThat(run.status()).isEqualTo(200);
        assertThat(sim.runStatus("r1")).isPresent();
    }

    @Test
    void withoutATokenTheSimulatorListensOnlyOnLoopback() {
        assertThatThrownBy(() -> SimulatorConfig.builder().host("0.0.0.0").build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("without a bearer token");
        assertThatThrownBy(() -> SimulatorConfig.fromCommandLine("--host", "192.168.1.10"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(SimulatorConfig.builder().host("0.0.0.0").bearerToken(TOKEN).build().host()).isEqualTo("0.0.0.0");
        assertThat(SimulatorConfig.builder().host("localhost").build().host()).isEqualTo("localhost");
        assertThat(SimulatorConfig.builder().host("::1").build().host()).isEqualTo("::1");
    }

    // ------------------------------------------------------------------ the body after the token

    @Test
    void theBodyIsNotReadBeforeTheTokenIsChecked() throws Exception {
        BridgeSimulator sim = start(TOKEN);
        String start = "{\"runId\":\"big\",\"userMessage\":\"";

        try (RawHttp connection = RawHttp.connect(sim)) {
            long sent = System.nanoTime();
            RawHttp.Response refused = connection.send(RawHttp.head("POST", "/run", local(sim), "Authorization: Bearer wrong",
                    "Content-Type: application/json", "Content-Length: 100000000"), start.getBytes(StandardCharsets.UTF_8))
                    .read();
            long waited = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sent);

            assertThat(refused.status()).isEqualTo(401);
            assertThat(code(refused)).isEqualTo("UNAUTHORIZED");
            assertThat(refused.body()).doesNotContain("wrong");
            assertThat(refused.header("Connection")).isEqualToIgnoringCase("close");
            assertThat(waited).as("answered without waiting for the body").isLessThan(2_000);
            assertThat(connection.closedByServer()).as("the connection is closed, the body left unread").isTrue();
        }
        assertThat(sim.runStatus("big")).isEmpty();
    }

    /** POST /run takes 1 MiB plus the Base64 of 25 MiB of attachments (about 36 MiB); every other route 1 MiB. */
    @Test
    void aBodyOverTheLimitIsRefusedWithoutReadingIt() throws Exception {
        BridgeSimulator sim = start(TOKEN);

        for (String[] over : new String[][] {{"/run", String.valueOf(40 << 20)}, {"/runs/r1/clarify", String.valueOf(2 << 20)}}) {
            try (RawHttp connection = RawHttp.connect(sim)) {
                RawHttp.Response refused = connection.send(RawHttp.head("POST", over[0], local(sim),
                        "Authorization: Bearer " + TOKEN, "Content-Type: application/json", "Content-Length: " + over[1]),
                        "{".getBytes(StandardCharsets.UTF_8)).read();

                assertThat(refused.status()).as(over[0]).isEqualTo(413);
                assertThat(code(refused)).isEqualTo("INVALID_REQUEST");
                assertThat(connection.closedByServer()).isTrue();
            }
        }
    }

    @Test
    void aRequestAnsweredAfterItsBodyWasReadKeepsItsConnection() throws Exception {
        BridgeSimulator sim = start(TOKEN);
        String body = "{\"clarifyId\":\"c-x\",\"answer\":\"a\"}";

        try (RawHttp connection = RawHttp.connect(sim)) {
            RawHttp.Response unknown = connection.send(RawHttp.head("POST", "/runs/nope/clarify", local(sim),
                    "Authorization: Bearer " + TOKEN, "Content-Type: application/json", "Content-Length: " + body.length()),
                    body.getBytes(StandardCharsets.UTF_8)).read();
            RawHttp.Response health = connection.send(RawHttp.head("GET", "/health", local(sim)), new byte[0]).read();

            assertThat(unknown.status()).isEqualTo(404);
            assertThat(code(unknown)).isEqualTo("RUN_NOT_FOUND");
            assertThat(health.status()).as("the same connection serves the next request").isEqualTo(200);
        }
    }

    // ------------------------------------------------------------------ ids

    @Test
    void theIdsTheSimulatorMakesUpAreRandom() throws Exception {
        BridgeSimulator sim = start(TOKEN);
        Pattern approvalId = Pattern.compile("a-[A-Za-z0-9_-]{22}");
        Pattern clarifyId = Pattern.compile("c-[A-Za-z0-9_-]{22}");
        Pattern toolCallId = Pattern.compile("t-[A-Za-z0-9_-]{22}");
        Set<String> seen = new HashSet<>();
        int made = 0;

        for (int i = 0; i < 3; i++) {
            CompletableFuture<HttpResponse<String>> approval = waitingForApproval(sim, "approve-" + i, TOKEN);
            JsonNode pending = JSON.readTree(call(sim, "GET", "/runs/approve-" + i, null, TOKEN).body()).path("pendingApproval");
            assertThat(pending.path("approvalId").asText()).matches(approvalId);
            assertThat(pending.path("toolCallId").asText()).matches(toolCallId);
            seen.add(pending.path("approvalId").asText());
            seen.add(pending.path("toolCallId").asText());
            made += 2;
            call(sim, "POST", "/runs/approve-" + i + "/cancel", null, TOKEN);
            approval.get(10, TimeUnit.SECONDS);

            String tools = call(sim, "POST", "/run", "{\"runId\":\"tools-" + i + "\",\"userMessage\":\"use the tools\"}", TOKEN)
                    .body();
            for (String line : tools.lines().filter(l -> l.startsWith("data: ") && l.contains("\"kind\":\"tool_call\"")).toList()) {
                String id = JSON.readTree(line.substring(6)).path("toolCallId").asText();
                assertThat(id).matches(toolCallId);
                seen.add(id);
                made++;
            }

            CompletableFuture<HttpResponse<String>> clarify = http.sendAsync(HttpRequest.newBuilder(URI.create(sim.baseUrl()
                    + "/run")).header("Authorization", "Bearer " + TOKEN).header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString("{\"runId\":\"clarify-" + i + "\",\"userMessage\":\"clarify\"}"))
                    .build(), HttpResponse.BodyHandlers.ofString());
            String asked = "";
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (asked.isEmpty()) {
                assertThat(System.nanoTime()).isLessThan(deadline);
                asked = JSON.readTree(call(sim, "GET", "/runs/clarify-" + i, null, TOKEN).body()).path("pendingClarify")
                        .path("clarifyId").asText();
            }
            assertThat(asked).matches(clarifyId);
            seen.add(asked);
            made++;
            call(sim, "POST", "/runs/clarify-" + i + "/cancel", null, TOKEN);
            clarify.get(10, TimeUnit.SECONDS);
        }

        assertThat(made).as("per round: an approval and its tool call, two tool calls, a question").isEqualTo(3 * 5);
        assertThat(seen).as("no id made up twice").hasSize(made);
    }
}
