package dev.parley.chat.hermes;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.testing.StreamCollector;
import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.ModelOption;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.ToolResult;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** What the API server's streams become, per Hermes line, against the stub that plays them as real servers do. */
class ApiServerMappingTest extends ApiServerTestSupport {
    private static final String NOTE = "; Hermes' API server does not send tool output";

    @ParameterizedTest
    @EnumSource(HermesApiStub.Line.class)
    void aTurnShowsItsTextAndHonestToolStepsAndNoInventedThinkingOrTodos(HermesApiStub.Line line) {
        HermesApiStub hermes = stub(line);

        List<AgentStreamEvent> events = StreamCollector.collect(apiAdapter(hermes).generateResponse(request()));

        AgentStreamEvent.RuntimeSession session = (AgentStreamEvent.RuntimeSession) events.get(0);
        assertThat(session.sessionId()).startsWith("parley-");
        assertThat(session.resumed()).isFalse();
        assertThat(events.subList(1, events.size())).containsExactly(
                new AgentStreamEvent.TextDelta("r1:answer", "Let me "),
                new AgentStreamEvent.ToolCallStart("r1:tool:call-1", "call-1", "terminal", "{\"preview\":\"ls -la\"}"),
                new AgentStreamEvent.ToolCallResult("r1:result:call-1", "call-1", "finished in 0.412 s" + NOTE, false),
                new AgentStreamEvent.ToolCallStart("r1:tool:call-2", "call-2", "todo", "{\"preview\":\"planning 2 task(s)\"}"),
                new AgentStreamEvent.ToolCallResult("r1:result:call-2", "call-2", "finished in 0.003 s" + NOTE, false),
                new AgentStreamEvent.ToolCallStart("r1:tool:call-3", "call-3", "terminal", "{\"preview\":\"cat missing.txt\"}"),
                new AgentStreamEvent.ToolCallResult("r1:result:call-3", "call-3", "failed after 0.05 s" + NOTE, true),
                new AgentStreamEvent.TextDelta("r1:answer", "look at the files."),
                new AgentStreamEvent.TextFinal("r1:answer", "Let me look at the files."),
                new AgentStreamEvent.Usage(50, 20, 70),
                new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        assertThat(events).as("reasoning.available is the answer's own text").noneMatch(
                e -> e instanceof AgentStreamEvent.ThinkingDelta);
        assertThat(events).as("the todo tool's preview is no list").noneMatch(e -> e instanceof AgentStreamEvent.TodosUpdated);
        JsonNode body = hermes.runs().get(0).body;
        assertThat(body.path("input").asText()).isEqualTo("Hello there");
        assertThat(body.path("session_id").asText()).isEqualTo(session.sessionId());
        assertThat(body.has("instructions")).isFalse();
        assertThat(hermes.count("GET /v1/runs/" + hermes.runs().get(0).id + "/events")).isEqualTo(1);
    }

    @ParameterizedTest
    @EnumSource(HermesApiStub.Line.class)
    void aFailedRunFailsWithHermesReason(HermesApiStub.Line line) {
        HermesApiStub hermes = stub(line);
        hermes.script = body -> "failed.sse";

        assertThat(StreamCollector.collect(apiAdapter(hermes).generateResponse(request())).subList(1, 3)).containsExactly(
                new AgentStreamEvent.TextDelta("r1:answer", "Part"),
                new AgentStreamEvent.RunFailed("RUNTIME_FAILED", "Provider error: rate limited"));
    }

    @ParameterizedTest
    @EnumSource(HermesApiStub.Line.class)
    void aLostStreamIsNotSubscribedAgainButItsOutcomePolled(HermesApiStub.Line line) {
        HermesApiStub hermes = stub(line);
        hermes.script = body -> "lost.sse";

        List<AgentStreamEvent> events = StreamCollector.collect(apiAdapter(hermes).generateResponse(request()));

        assertThat(events.subList(1, events.size())).containsExactly(
                new AgentStreamEvent.TextDelta("r1:answer", "Par"),
                new AgentStreamEvent.StatusUpdate("r1:status:stream-lost", "warn",
                        "The live event stream from Hermes was lost; waiting for the run's result without live progress."),
                new AgentStreamEvent.TextFinal("r1:answer", "Par"),
                new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        String run = hermes.runs().get(0).id;
        assertThat(hermes.count("GET /v1/runs/" + run + "/events")).as("a second subscriber would be 404").isEqualTo(1);
        assertThat(hermes.count("GET /v1/runs/" + run + " ")).isPositive();
    }

    @Test
    void theServerIsReadOnceAndAgainAfterAFailure() {
        HermesApiStub hermes = stub(HermesApiStub.Line.V0_19);
        HermesRuntimeAdapter adapter = apiAdapter(hermes);

        StreamCollector.collect(adapter.generateResponse(request()));
        StreamCollector.collect(adapter.generateResponse(request()));
        assertThat(hermes.count("GET /health ")).isEqualTo(1);
        assertThat(hermes.count("GET /v1/capabilities ")).isEqualTo(1);

        hermes.script = body -> "lost.sse";
        StreamCollector.collect(adapter.generateResponse(request()));
        hermes.script = body -> "plain.sse";
        StreamCollector.collect(adapter.generateResponse(request()));
        assertThat(hermes.count("GET /health ")).as("read again after the lost stream").isEqualTo(2);
    }

    @Test
    void theModelAndSkillPromptAreSentButNoCredentials() {
        HermesApiStub hermes = stub(HermesApiStub.Line.NEWER);
        HermesRuntimeAdapter adapter = apiAdapter(hermes, b -> b.modelResolver(ModelResolver.of(List.of(
                new HermesModel("m", "gpt-5", "openai", "https://x", "sk-zzzzzzzz")))));
        RunRequest request = new RunRequest("t1", "r1", "alice", "r1:answer", "hi", "parley-s9", "m", null, null, null,
                Map.of());

        List<AgentStreamEvent> events = StreamCollector.collect(adapter.generateResponse(request));

        assertThat(events.get(0)).isEqualTo(new AgentStreamEvent.RuntimeSession("parley-s9", true));
        JsonNode body = hermes.runs().get(0).body;
        assertThat(body.path("session_id").asText()).isEqualTo("parley-s9");
        assertThat(body.path("model").asText()).isEqualTo("gpt-5");
        assertThat(body.path("provider").asText()).isEqualTo("openai");
        assertThat(body.toString()).as("the API server takes no model credentials").doesNotContain("sk-zzzzzzzz");
    }

    @Test
    void aRejectedStartCarriesTheServersCode() {
        wiremock.stubFor(get("/health").willReturn(aResponse().withStatus(200)
                .withBody("{\"status\": \"ok\", \"platform\": \"hermes-agent\", \"version\": \"0.19.0\"}")));
        wiremock.stubFor(post("/v1/runs").willReturn(aResponse().withStatus(429).withHeader("Content-Type", "application/json")
                .withBody("{\"error\":{\"message\":\"Too many concurrent runs (max 10)\",\"type\":\"rate_limit_error\","
                        + "\"code\":\"rate_limit_exceeded\"}}")));
        HermesRuntimeAdapter adapter = adapter(b -> b.transport(HermesTransport.API_SERVER).bearerToken(HermesApiStub.KEY));

        assertThat(StreamCollector.collect(adapter.generateResponse(request())))
                .containsExactly(new AgentStreamEvent.RunFailed("RATE_LIMIT_EXCEEDED", "Too many concurrent runs (max 10)"));
    }

    @Test
    void theTransportDeclaresWhatTheServerCanDoAndListsItsModels() {
        HermesRuntimeAdapter old = apiAdapter(stub(HermesApiStub.Line.V0_19));
        assertThat(old.health().healthy()).isTrue();
        assertThat(old.health().detail()).contains("Hermes 0.19.0", "memory: conversation_history", "start sent once",
                "clarify off");
        assertThat(old.capabilities()).containsExactlyInAnyOrder(Capability.APPROVALS, Capability.CANCEL);
        assertThat(old.models()).containsExactly(new ModelOption("hermes-agent", "hermes-agent", null));
        assertCode(ErrorCode.UNSUPPORTED, () -> old.reattach(request(), "3"));
        assertCode(ErrorCode.UNSUPPORTED, () -> old.submitToolResult(new ToolResult("r1", "x", "y", false)));
        assertCode(ErrorCode.NOT_FOUND, () -> old.cancel("unknown"));

        HermesRuntimeAdapter newer = apiAdapter(stub(HermesApiStub.Line.NEWER));
        assertThat(newer.health().detail()).contains("Hermes 0.21.2", "memory: session_id",
                "start retried with its Idempotency-Key", "clarify on");
        assertThat(newer.capabilities()).containsExactlyInAnyOrder(Capability.APPROVALS, Capability.CANCEL,
                Capability.CLARIFY);
    }
}
