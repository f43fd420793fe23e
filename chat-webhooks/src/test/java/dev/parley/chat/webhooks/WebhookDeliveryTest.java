package dev.parley.chat.webhooks;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.stubbing.Scenario;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.outbox.OutboxEntry;
import dev.parley.chat.outbox.OutboxStore;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import dev.parley.chat.webhooks.internal.StandardWebhooksSigner;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Webhooks from real runs reach a real HTTP receiver, signed, retried, and given up on within their bound. */
class WebhookDeliveryTest {
    private static final String SECRET = "whsec_" + Base64.getEncoder().encodeToString(
            "a key of thirty-two bytes, fixed".getBytes(StandardCharsets.UTF_8));
    private static final String ANSWER = "the secret plan is ready";
    private static final ObjectMapper JSON = new ObjectMapper();

    private final WireMockServer receiver = new WireMockServer(options().dynamicPort());
    private final InMemoryChatStore store = new InMemoryChatStore();
    private final List<AutoCloseable> closing = new ArrayList<>();
    private final List<String> failures = new CopyOnWriteArrayList<>();
    private final List<String> retries = new CopyOnWriteArrayList<>();

    WebhookDeliveryTest() {
        receiver.start();
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = closing.size() - 1; i >= 0; i--) {
            closing.get(i).close();
        }
        receiver.stop();
    }

    private String url(String path) {
        return "http://localhost:" + receiver.port() + path + "?token=query-secret";
    }

    private Webhooks.Builder webhooks(String path, Set<String> events) {
        return Webhooks.builder()
                .endpoint(WebhookEndpoint.of("ops", url(path), SECRET, events))
                .pollInterval(Duration.ofMillis(20))
                .leaseDuration(Duration.ofSeconds(30))
                .callTimeout(Duration.ofSeconds(2))
                .listener(new WebhookListener() {
                    @Override
                    public void retrying(WebhookEndpoint endpoint, OutboxEntry entry, int attempt, String error,
                            Instant next) {
                        retries.add(entry.messageId() + " " + attempt + " " + error);
                    }

                    @Override
                    public void failed(WebhookEndpoint endpoint, OutboxEntry entry, int attempts, String error) {
                        failures.add(entry.messageId() + " " + attempts + " " + error);
                    }
                });
    }

    private ChatEngine engine(ScriptedRuntime runtime, Webhooks webhooks) {
        ChatEngine engine = ChatEngine.builder().runtime(runtime).store(store).outbox(webhooks.routing()).build();
        closing.add(engine);
        WebhookDispatcher dispatcher = webhooks.dispatcher(store);
        closing.add(dispatcher);
        dispatcher.start();
        return engine;
    }

    private List<LoggedRequest> received(String path, int atLeast) {
        return Await.until(() -> receiver.findAll(postRequestedFor(urlEqualTo(path + "?token=query-secret"))),
                requests -> requests.size() >= atLeast, atLeast + " webhook(s) at " + path);
    }

    private static void assertSigned(LoggedRequest request) {
        assertThat(StandardWebhooksVerifier.verify(SECRET, request.getHeader("webhook-id"),
                request.getHeader("webhook-timestamp"), request.getBodyAsString(), request.getHeader("webhook-signature")))
                .as("the signature verifies").isTrue();
        assertThat(StandardWebhooksVerifier.verify(SECRET, request.getHeader("webhook-id"),
                request.getHeader("webhook-timestamp"), request.getBodyAsString() + " ", request.getHeader("webhook-signature")))
                .as("a changed body does not").isFalse();
        long sent = Long.parseLong(request.getHeader("webhook-timestamp"));
        assertThat(Math.abs(Instant.now().getEpochSecond() - sent)).as("unix seconds, now").isLessThan(60);
    }

    @Test
    void theSignerAndTheVerifierAgreeWithTheSpecificationsTestVector() {
        String secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        String id = "msg_p5jXN8AQM9LWM0D4loKWxJek";
        String body = "{\"test\": 2432232314}";
        String expected = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
        assertThat(StandardWebhooksVerifier.verify(secret, id, "1614265330", body, expected)).isTrue();
        assertThat(StandardWebhooksSigner.sign(WebhookSecret.parse(secret).key(), id, 1614265330, body))
                .isEqualTo(expected);
    }

    @Test
    void aRunsEndAndItsQuestionReachTheReceiverSignedWithIdsOnly() throws Exception {
        receiver.stubFor(post(urlEqualTo("/hooks?token=query-secret")).willReturn(aResponse().withStatus(204)));
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Oslo"))),
                webhooks("/hooks", Set.of()).build());
        String threadId = engine.createThread("alice", NewThread.empty()).id();
        String runId = engine.startRun("alice", threadId, StartRun.of(ANSWER)).runId();

        LoggedRequest asked = received("/hooks", 1).get(0);
        assertSigned(asked);
        JsonNode question = JSON.readTree(asked.getBodyAsString());
        assertThat(question.get("type").asText()).isEqualTo("input.requested");
        assertThat(question.at("/data/threadId").asText()).isEqualTo(threadId);
        assertThat(question.at("/data/runId").asText()).isEqualTo(runId);
        assertThat(question.at("/data/status").asText()).isEqualTo("WAITING_FOR_INPUT");
        assertThat(question.at("/data/inputKind").asText()).isEqualTo(InputKind.CLARIFY.wireName());
        String inputId = question.at("/data/inputId").asText();
        assertThat(engine.state("alice", runId).pendingInputs()).extracting(p -> p.inputId()).containsExactly(inputId);
        assertThat(Instant.parse(question.get("timestamp").asText())).isBefore(Instant.now().plusSeconds(1));

        engine.answer("alice", runId, inputId, new dev.parley.chat.input.ClarifyAnswer(List.of("Oslo")));
        LoggedRequest ended = received("/hooks", 2).get(1);
        assertSigned(ended);
        JsonNode end = JSON.readTree(ended.getBodyAsString());
        assertThat(end.get("type").asText()).isEqualTo("run.succeeded");
        assertThat(end.at("/data/status").asText()).isEqualTo("SUCCEEDED");
        assertThat(end.at("/data").has("inputId")).isFalse();
        assertThat(ended.getHeader("webhook-id")).isNotEqualTo(asked.getHeader("webhook-id")).startsWith("msg_");
        assertThat(ended.getHeader("Content-Type")).startsWith("application/json");
        for (LoggedRequest request : List.of(asked, ended)) {
            assertThat(request.getBodyAsString()).doesNotContain(ANSWER, "Oslo", "Which city", "alice", "whsec");
        }
        Await.until(store::countOutbox, counts -> counts.equals(new OutboxStore.Counts(0, 0)), "the outbox to empty");
    }

    @Test
    void aReceiverThatFailsOnceGetsTheSameDeliveryAgain() throws Exception {
        receiver.stubFor(post(urlEqualTo("/flaky?token=query-secret")).inScenario("flaky")
                .whenScenarioStateIs(Scenario.STARTED).willReturn(aResponse().withStatus(500))
                .willSetStateTo("up"));
        receiver.stubFor(post(urlEqualTo("/flaky?token=query-secret")).inScenario("flaky")
                .whenScenarioStateIs("up").willReturn(aResponse().withStatus(200)));
        Webhooks webhooks = webhooks("/flaky", Set.of("run.succeeded"))
                .retry(new RetryPolicy(Duration.ofMillis(200), Duration.ofSeconds(1), Duration.ofMinutes(5), 5)).build();
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.answer(ANSWER)), webhooks);
        String threadId = engine.createThread("alice", NewThread.empty()).id();
        String runId = engine.startRun("alice", threadId, StartRun.of("hi")).runId();

        List<LoggedRequest> requests = received("/flaky", 2);
        Await.until(store::countOutbox, counts -> counts.equals(new OutboxStore.Counts(0, 0)), "the outbox to empty");
        assertThat(requests).hasSize(2);
        assertThat(requests.get(1).getHeader("webhook-id")).isEqualTo(requests.get(0).getHeader("webhook-id"));
        assertThat(requests.get(1).getBodyAsString()).isEqualTo(requests.get(0).getBodyAsString());
        requests.forEach(WebhookDeliveryTest::assertSigned);
        assertThat(JSON.readTree(requests.get(1).getBodyAsString()).at("/data/runId").asText()).isEqualTo(runId);
        assertThat(retries).singleElement().asString().endsWith(" 1 HTTP 500");
        assertThat(failures).isEmpty();
        Thread.sleep(400);
        assertThat(receiver.findAll(postRequestedFor(urlEqualTo("/flaky?token=query-secret")))).as("no more").hasSize(2);
    }

    @Test
    void aDeliveryThatKeepsFailingIsGivenUpWithOneWarningAndCountedAsFailed() {
        receiver.stubFor(post(urlEqualTo("/down?token=query-secret")).willReturn(aResponse().withStatus(503)));
        receiver.stubFor(post(urlEqualTo("/gone?token=query-secret")).willReturn(aResponse().withStatus(410)));
        Webhooks webhooks = Webhooks.builder()
                .endpoint(WebhookEndpoint.of("down", url("/down"), SECRET, Set.of("run.failed")))
                .endpoint(WebhookEndpoint.of("gone", url("/gone"), SECRET, Set.of("run.failed")))
                .retry(new RetryPolicy(Duration.ofMillis(100), Duration.ofMillis(200), Duration.ofMinutes(5), 3))
                .pollInterval(Duration.ofMillis(20)).callTimeout(Duration.ofSeconds(2))
                .listener(new WebhookListener() {
                    @Override
                    public void failed(WebhookEndpoint endpoint, OutboxEntry entry, int attempts, String error) {
                        failures.add(endpoint.name() + " " + attempts + " " + error);
                    }
                }).build();
        PrintStream err = System.err;
        ByteArrayOutputStream log = new ByteArrayOutputStream();
        System.setErr(new PrintStream(log, true, StandardCharsets.UTF_8));
        WebhookDispatcher dispatcher;
        try {
            ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.failsWith("MODEL_ERROR", "boom")), webhooks);
            String threadId = engine.createThread("alice", NewThread.empty()).id();
            engine.startRun("alice", threadId, StartRun.of("hi"));
            Await.until(store::countOutbox, counts -> counts.failed() == 2, "both deliveries to fail for good");
            dispatcher = (WebhookDispatcher) closing.get(closing.size() - 1);
            Await.until(dispatcher::counts, counts -> counts.equals(new OutboxStore.Counts(0, 2)),
                    "the dispatcher's counts");
        } finally {
            System.setErr(err);
        }
        assertThat(failures).containsExactlyInAnyOrder("down 3 HTTP 503", "gone 1 HTTP 410 (Gone: not tried again)");
        assertThat(receiver.findAll(postRequestedFor(urlEqualTo("/down?token=query-secret")))).hasSize(3);
        assertThat(receiver.findAll(postRequestedFor(urlEqualTo("/gone?token=query-secret")))).hasSize(1);
        List<String> warnings = log.toString(StandardCharsets.UTF_8).lines()
                .filter(line -> line.contains("WARN") && line.contains("failed for good")).toList();
        assertThat(warnings).hasSize(2).allSatisfy(line -> assertThat(line)
                .contains("run.failed", "http://localhost:" + receiver.port())
                .doesNotContain("query-secret", SECRET.substring(6)));
        assertThat(String.join("\n", warnings)).contains("/down failed for good after 3 attempt(s): HTTP 503",
                "/gone failed for good after 1 attempt(s): HTTP 410");
    }

    @Test
    void anEndpointThatHangsNeverSlowsARun() {
        receiver.stubFor(post(urlEqualTo("/slow?token=query-secret"))
                .willReturn(aResponse().withStatus(200).withFixedDelay(6_000)));
        Webhooks webhooks = webhooks("/slow", Set.of()).callTimeout(Duration.ofSeconds(8))
                .leaseDuration(Duration.ofSeconds(60)).build();
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("ok")), webhooks);
        String threadId = engine.createThread("alice", NewThread.empty()).id();
        long started = System.nanoTime();
        for (int i = 0; i < 3; i++) {
            String runId = engine.startRun("alice", threadId, StartRun.of("hi " + i)).runId();
            Await.until(() -> engine.state("alice", runId).run().status(), RunStatus.SUCCEEDED::equals, "run " + i);
        }
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("three runs, while the receiver hangs")
                .isLessThan(Duration.ofSeconds(5));
        received("/slow", 1);
    }
}
