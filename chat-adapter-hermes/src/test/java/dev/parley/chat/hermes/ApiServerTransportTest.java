package dev.parley.chat.hermes;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.AgentStreamEvent.ClarifyOutcome;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.TodoItem;
import dev.parley.chat.model.TodoStatus;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.ToolResult;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Hermes' own API server: /v1/runs, its data-only event stream, approvals, clarify, stop. */
class ApiServerTransportTest extends AdapterTestSupport {
    private static final ObjectMapper JSON = new ObjectMapper();

    private HermesRuntimeAdapter apiAdapter(String baseUrl) {
        return adapter(baseUrl, b -> b.transport(HermesTransport.API_SERVER).bearerToken("api-key-0123456789abcdef"));
    }

    private static void accepted() {
        wiremock.stubFor(post("/v1/runs").willReturn(aResponse().withStatus(202).withHeader("Content-Type", "application/json")
                .withBody("{\"run_id\":\"run_abc\",\"status\":\"started\",\"replayed\":false}")));
    }

    @Test
    void eventsMapToTheirParleyEvents() throws Exception {
        accepted();
        wiremock.stubFor(get("/v1/runs/run_abc/events").willReturn(sse("api-server/plain.sse")));

        List<AgentStreamEvent> events = StreamCollector.collect(apiAdapter(wiremockUrl()).generateResponse(request()));

        AgentStreamEvent.RuntimeSession session = (AgentStreamEvent.RuntimeSession) events.get(0);
        assertThat(session.sessionId()).startsWith("parley-");
        assertThat(session.resumed()).isFalse();
        assertThat(events.subList(1, events.size())).containsExactly(
                new AgentStreamEvent.TextDelta("r1:answer", "Hel"),
                new AgentStreamEvent.ThinkingDelta("r1:thinking:1", "I should greet."),
                new AgentStreamEvent.ToolCallStart("r1:tool:call-1", "call-1", "terminal", "{\"preview\":\"ls -la\"}"),
                new AgentStreamEvent.ToolCallStart("r1:tool:call-2", "call-2", "terminal", "{\"preview\":\"pwd\"}"),
                new AgentStreamEvent.ToolCallResult("r1:result:call-1", "call-1", "file.txt", false),
                new AgentStreamEvent.ToolCallResult("r1:result:call-2", "call-2", "denied", true),
                new AgentStreamEvent.ToolCallStart("r1:tool:call-3", "call-3", "todo", "{\"preview\":\"plan\"}"),
                new AgentStreamEvent.ToolCallResult("r1:result:call-3", "call-3",
                        "{\"todos\": [{\"id\": \"1\", \"content\": \"Greet\", \"status\": \"completed\"}], \"revision\": 2}", false),
                new AgentStreamEvent.TodosUpdated("r1:todo", List.of(new TodoItem("1", "Greet", TodoStatus.COMPLETED, null))),
                new AgentStreamEvent.StatusUpdate("r1:status:2", "interim", "Working on it"),
                new AgentStreamEvent.StatusUpdate("r1:status:3", "subagent", "Subagent started: count files"),
                new AgentStreamEvent.TextDelta("r1:answer", "lo"),
                new AgentStreamEvent.TextFinal("r1:answer", "Hello"),
                new AgentStreamEvent.Usage(50, 200, 250),
                new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));

        var posted = wiremock.findAll(postRequestedFor(urlEqualTo("/v1/runs"))).get(0);
        assertThat(posted.getHeader("Idempotency-Key")).isEqualTo("r1");
        assertThat(posted.getHeader("Authorization")).isEqualTo("Bearer api-key-0123456789abcdef");
        JsonNode body = JSON.readTree(posted.getBodyAsString());
        assertThat(body.path("input").asText()).isEqualTo("Hello there");
        assertThat(body.path("session_id").asText()).isEqualTo(session.sessionId());
        assertThat(body.has("instructions")).isFalse();
    }

    @Test
    void theThreadsSessionIsContinuedAndTheModelNamed() throws Exception {
        accepted();
        wiremock.stubFor(get("/v1/runs/run_abc/events").willReturn(sse("api-server/failed.sse")));
        HermesRuntimeAdapter adapter = adapter(wiremockUrl(), b -> b.transport(HermesTransport.API_SERVER)
                .modelResolver(ModelResolver.of(List.of(new HermesModel("m", "gpt-5", "openai", "https://x", "sk-zzzzzzzz")))));
        RunRequest request = new RunRequest("t1", "r1", "alice", "r1:answer", "hi", "sess-9", "m", null, null, null, null);

        List<AgentStreamEvent> events = StreamCollector.collect(adapter.generateResponse(request));

        assertThat(events).containsExactly(
                new AgentStreamEvent.RuntimeSession("sess-9", true),
                new AgentStreamEvent.TextDelta("r1:answer", "Part"),
                new AgentStreamEvent.RunFailed("RUNTIME_FAILED", "Provider error: rate limited"));
        JsonNode body = JSON.readTree(wiremock.findAll(postRequestedFor(urlEqualTo("/v1/runs"))).get(0).getBodyAsString());
        assertThat(body.path("session_id").asText()).isEqualTo("sess-9");
        assertThat(body.path("model").asText()).isEqualTo("gpt-5");
        assertThat(body.path("provider").asText()).isEqualTo("openai");
        assertThat(body.toString()).as("the API server takes no model credentials").doesNotContain("sk-zzzzzzzz");
    }

    @Test
    void approvalsAndClarifyQuestionsBecomeClarifyRequests() {
        accepted();
        wiremock.stubFor(get("/v1/runs/run_abc/events").willReturn(sse("api-server/approval.sse")));

        List<AgentStreamEvent> events = StreamCollector.collect(apiAdapter(wiremockUrl()).generateResponse(request()));

        assertThat(events.subList(1, events.size())).containsExactly(
                new AgentStreamEvent.TextDelta("r1:answer", "Checking"),
                new AgentStreamEvent.ClarifyRequested("r1:clarify:approval:ap1", "approval:ap1",
                        "Hermes asks for approval: delete files\n\nrm -rf build", List.of("once", "session", "always", "deny"),
                        false, null),
                new AgentStreamEvent.ClarifyRequested("r1:clarify:cl9", "cl9", "Which env?",
                        List.of("Staging (Recommended)", "Production"), true, null),
                new AgentStreamEvent.ClarifyResolved("cl9", ClarifyOutcome.CANCELLED, List.of()),
                new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "interrupted_by_user"));
    }

    @Test
    void anUnfinishedTurnKeepsItsPartialOutputAndFails() {
        accepted();
        wiremock.stubFor(get("/v1/runs/run_abc/events").willReturn(sse("api-server/budget.sse")));

        List<AgentStreamEvent> events = StreamCollector.collect(apiAdapter(wiremockUrl()).generateResponse(request()));

        assertThat(events.subList(1, events.size())).containsExactly(
                new AgentStreamEvent.TextDelta("r1:answer", "Part"),
                new AgentStreamEvent.TextFinal("r1:answer", "Partial answer"),
                new AgentStreamEvent.Usage(1, 2, 3),
                new AgentStreamEvent.RunFailed("RUNTIME_FAILED", "the run did not finish: max_iterations_reached(60/60)"));
    }

    @Test
    void aLostStreamFallsBackToPollingTheRunStatus() {
        accepted();
        wiremock.stubFor(get("/v1/runs/run_abc/events").willReturn(sse("api-server/lost.sse")));
        wiremock.stubFor(get("/v1/runs/run_abc").willReturn(aResponse().withHeader("Content-Type", "application/json")
                .withBody("{\"object\":\"hermes.run\",\"run_id\":\"run_abc\",\"status\":\"completed\",\"output\":\"Partial done\","
                        + "\"usage\":{\"input_tokens\":3,\"output_tokens\":4,\"total_tokens\":7}}")));

        List<AgentStreamEvent> events = StreamCollector.collect(apiAdapter(wiremockUrl()).generateResponse(request()));

        assertThat(events.subList(1, events.size())).containsExactly(
                new AgentStreamEvent.TextDelta("r1:answer", "Par"),
                new AgentStreamEvent.StatusUpdate("r1:status:stream-lost", "warn",
                        "The live event stream from Hermes was lost; waiting for the run's result without live progress."),
                new AgentStreamEvent.TextFinal("r1:answer", "Partial done"),
                new AgentStreamEvent.Usage(3, 4, 7),
                new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
    }

    @Test
    void aRejectedStartCarriesTheServersCode() {
        wiremock.stubFor(post("/v1/runs").willReturn(aResponse().withStatus(429).withHeader("Content-Type", "application/json")
                .withBody("{\"error\":{\"message\":\"Too many concurrent runs (max 10)\",\"type\":\"rate_limit_error\","
                        + "\"code\":\"rate_limit_exceeded\"}}")));

        assertThat(StreamCollector.collect(apiAdapter(wiremockUrl()).generateResponse(request())))
                .containsExactly(new AgentStreamEvent.RunFailed("RATE_LIMIT_EXCEEDED", "Too many concurrent runs (max 10)"));
    }

    @Test
    void approvalsClarifyAnswersAndStopGoToTheirRoutes() throws Exception {
        CountDownLatch approved = new CountDownLatch(1);
        CountDownLatch clarified = new CountDownLatch(1);
        CountDownLatch stopped = new CountDownLatch(1);
        try (RawServer hermes = new RawServer(ex -> {
            if (ex.is("POST", "/v1/runs")) {
                ex.json(202, "{\"run_id\":\"run_abc\",\"status\":\"started\"}");
            } else if (ex.is("GET", "/v1/runs/run_abc/events")) {
                ex.streamHead();
                ex.write(data("approval.request", "\"description\":\"delete files\",\"request_id\":\"ap1\","
                        + "\"choices\":[\"once\",\"deny\"]"));
                await(approved);
                ex.write(data("approval.responded", "\"choice\":\"once\",\"resolved\":1"));
                ex.write(data("clarify.request", "\"clarify_id\":\"cl9\",\"question\":\"Env?\",\"choices\":[\"a\",\"b\"],"
                        + "\"multi_select\":true"));
                await(clarified);
                ex.write(data("clarify.retired", "\"clarify_id\":\"cl9\",\"notice\":\"answered\""));
                await(stopped);
                ex.write(data("run.cancelled", "\"interrupted\":true"));
            } else if (ex.is("POST", "/v1/runs/run_abc/approval")) {
                ex.json(200, "{\"object\":\"hermes.run.approval_response\",\"resolved\":1}");
                approved.countDown();
            } else if (ex.is("POST", "/v1/runs/run_abc/clarify")) {
                ex.json(200, "{\"resolved\":true}");
                clarified.countDown();
            } else if (ex.is("POST", "/v1/runs/run_abc/stop")) {
                ex.json(200, "{\"run_id\":\"run_abc\",\"status\":\"stopping\"}");
                stopped.countDown();
            } else {
                ex.json(404, "{}");
            }
        })) {
            HermesRuntimeAdapter adapter = apiAdapter(hermes.baseUrl());
            StreamCollector collector = StreamCollector.unbounded();
            adapter.generateResponse(request()).subscribe(collector);

            collector.awaitCount(2);
            assertThat(collector.events().get(1)).isEqualTo(new AgentStreamEvent.ClarifyRequested("r1:clarify:approval:ap1",
                    "approval:ap1", "Hermes asks for approval: delete files", List.of("once", "deny"), false, null));
            assertCode(ErrorCode.INVALID_INPUT, () -> adapter.answerClarify(new ClarifyReply("r1", "approval:ap1",
                    List.of("always"))));
            adapter.answerClarify(new ClarifyReply("r1", "approval:ap1", List.of("Once")));
            collector.awaitCount(3);
            adapter.answerClarify(new ClarifyReply("r1", "cl9", List.of("a", "b")));
            StreamCollector.sleep(100);
            adapter.cancel("r1");
            collector.awaitDone().assertContract();

            assertThat(collector.events()).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "stopped"));
            assertThat(collector.events()).noneMatch(e -> e instanceof AgentStreamEvent.ClarifyResolved);
            int approval = hermes.requests().indexOf("POST /v1/runs/run_abc/approval HTTP/1.1");
            assertThat(JSON.readTree(hermes.bodies().get(approval)))
                    .isEqualTo(JSON.readTree("{\"choice\":\"once\",\"request_id\":\"ap1\"}"));
            int clarify = hermes.requests().indexOf("POST /v1/runs/run_abc/clarify HTTP/1.1");
            assertThat(JSON.readTree(hermes.bodies().get(clarify)))
                    .isEqualTo(JSON.readTree("{\"clarify_id\":\"cl9\",\"response\":\"[\\\"a\\\",\\\"b\\\"]\"}"));
            assertThat(hermes.requests()).contains("POST /v1/runs/run_abc/stop HTTP/1.1");
        }
    }

    @Test
    void theApiServerTransportDeclaresOnlyWhatItCanDo() {
        HermesRuntimeAdapter adapter = apiAdapter(wiremockUrl());

        assertThat(adapter.capabilities()).containsExactlyInAnyOrder(Capability.CLARIFY, Capability.CANCEL);
        assertCode(ErrorCode.UNSUPPORTED, () -> adapter.reattach(request(), "3"));
        assertCode(ErrorCode.UNSUPPORTED, () -> adapter.submitToolResult(new ToolResult("r1", "x", "y", false)));
        assertCode(ErrorCode.NOT_FOUND, () -> adapter.cancel("unknown"));
        wiremock.stubFor(get("/health").willReturn(aResponse().withStatus(200).withBody("{\"status\":\"ok\"}")));
        assertThat(adapter.health().healthy()).isTrue();
        wiremock.verify(com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor(urlEqualTo("/health"))
                .withHeader("Authorization", equalTo("Bearer api-key-0123456789abcdef")));
    }

    private static String data(String event, String fields) {
        return "data: {\"event\":\"" + event + "\",\"run_id\":\"run_abc\",\"timestamp\":1.5," + fields + "}\n\n";
    }

    private static void await(CountDownLatch latch) throws InterruptedException {
        if (!latch.await(10, TimeUnit.SECONDS)) {
            throw new AssertionError("the client did not call in time");
        }
    }

    private static void assertCode(ErrorCode code, org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(code));
    }
}
