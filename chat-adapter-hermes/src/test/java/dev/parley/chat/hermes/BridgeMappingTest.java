package dev.parley.chat.hermes;

import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.testing.StreamCollector;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.AgentStreamEvent.InputOutcome;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.TodoItem;
import dev.parley.chat.model.TodoStatus;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.SkillResolver;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Every Bridge frame kind, mapped to events; the run request the adapter sends. */
class BridgeMappingTest extends AdapterTestSupport {

    @Test
    void everyFrameKindBecomesItsEvent() {
        wiremock.stubFor(post("/run").willReturn(sse("bridge/all-kinds.sse")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().generateResponse(request("s-old", List.of())));

        assertThat(events).containsExactly(
                new AgentStreamEvent.RuntimeSession("hs-1", true),
                new AgentStreamEvent.StatusUpdate("r1:status:2", "lifecycle", "Starting"),
                new AgentStreamEvent.ThinkingDelta("r1:thinking:3", "Let me "),
                new AgentStreamEvent.ThinkingDelta("r1:thinking:3", "think."),
                new AgentStreamEvent.ToolCallStart("r1:tool:call_1", "call_1", "web_search", "{\"q\":\"x\"}"),
                new AgentStreamEvent.ToolCallResult("r1:result:call_1", "call_1", "found", false),
                new AgentStreamEvent.ThinkingDelta("r1:thinking:7", "Next."),
                new AgentStreamEvent.TodosUpdated("r1:todo", List.of(new TodoItem("1", "A", TodoStatus.COMPLETED, null),
                        new TodoItem("2", "B", TodoStatus.IN_PROGRESS, "1"))),
                new AgentStreamEvent.InputRequested("r1:clarify:c1", "c1", new ClarifyRequest("Pick?", List.of("a", "b"), false),
                        null, "9"),
                new AgentStreamEvent.InputRequested("r1:clarify:c2", "c2", new ClarifyRequest("Other?", List.of(), true),
                        null, "11"),
                new AgentStreamEvent.InputResolved("c2", InputOutcome.CANCELLED, null),
                new AgentStreamEvent.TextDelta("r1:answer", "Hello "),
                new AgentStreamEvent.TextDelta("r1:answer", "world"),
                new AgentStreamEvent.RuntimeSession("hs-2", true),
                new AgentStreamEvent.Usage(10, 5, 15),
                new AgentStreamEvent.TextFinal("r1:answer", "Hello world!"),
                new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
    }

    @Test
    void deltaFramesOfEveryShapeMapAsTheProtocolSays() {
        wiremock.stubFor(post("/run").willReturn(sse("bridge/delta-shapes.sse")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().generateResponse(request()));

        assertThat(events).containsExactly(
                new AgentStreamEvent.RuntimeSession("hs-1", false),
                new AgentStreamEvent.ThinkingDelta("r1:thinking:2", "a"),
                new AgentStreamEvent.ThinkingDelta("r1:thinking:2", "b"),
                new AgentStreamEvent.TextDelta("r1:answer", "c"),
                new AgentStreamEvent.TextDelta("r1:answer", "7"),
                new AgentStreamEvent.TextDelta("r1:answer", ""),
                new AgentStreamEvent.TextDelta("r1:answer", "d"),
                new AgentStreamEvent.TextDelta("r1:answer", "e"),
                new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
    }

    @Test
    void anErrorFrameEndsTheRunFailedWithItsCodeKeepingWhatCameBefore() {
        wiremock.stubFor(post("/run").willReturn(sse("bridge/error.sse")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().generateResponse(request()));

        assertThat(events).containsExactly(
                new AgentStreamEvent.RuntimeSession("hs-1", false),
                new AgentStreamEvent.ThinkingDelta("r1:thinking:2", "Hmm"),
                new AgentStreamEvent.TextDelta("r1:answer", "Part "),
                new AgentStreamEvent.RunFailed("AGENT_ERROR", "the model refused"));
    }

    @Test
    void doneCancelledEndsTheRunCancelled() {
        wiremock.stubFor(post("/run").willReturn(sse("bridge/cancelled.sse")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().generateResponse(request()));

        assertThat(events).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "cancelled"));
        assertThat(events).contains(new AgentStreamEvent.TextDelta("r1:answer", "Part "));
    }

    @Test
    void aHostToolCallEndsItsArgumentsAndItsBridgeResultIsLeftToTheEngine() {
        wiremock.stubFor(post("/run").willReturn(sse("bridge/host-tool.sse")));
        HostToolSpec lookup = new HostToolSpec("lookup_order", "Looks an order up", "{\"type\":\"object\"}");

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().generateResponse(request(null, List.of(lookup))));

        assertThat(events).containsExactly(
                new AgentStreamEvent.RuntimeSession("hs-1", false),
                new AgentStreamEvent.ToolCallStart("r1:tool:h1", "h1", "lookup_order", "{\"id\":7}"),
                new AgentStreamEvent.ToolCallEnd("h1"),
                new AgentStreamEvent.TextFinal("r1:answer", "It shipped."),
                new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
    }

    @Test
    void theRunRequestCarriesSessionModelSkillToolsContextAndToken(@TempDir Path skills) throws Exception {
        Files.createDirectories(skills.resolve("writer"));
        Files.writeString(skills.resolve("writer/SKILL.md"), "---\nname: Writer\ndescription: Writes well\n---\nBe concise.");
        wiremock.stubFor(post("/run").willReturn(sse("bridge/fresh-session.sse")));
        HermesRuntimeAdapter adapter = adapter(b -> b.bearerToken("tok-123456").defaultMaxIterations(42)
                .skillResolver(SkillResolver.directory(skills))
                .modelResolver(ModelResolver.of(List.of(new HermesModel("m1", "anthropic/claude-sonnet-4", "anthropic",
                        "https://llm.example/v1", "sk-test-abcdef")))));
        RunRequest request = new RunRequest("t1", "r1", "alice", "r1:answer", "Write a haiku", "hs-9", "m1", "writer", null,
                List.of(new HostToolSpec("lookup_order", "Looks an order up", "{\"type\":\"object\"}")),
                Map.of("page", "orders"));

        StreamCollector.collect(adapter.generateResponse(request));

        wiremock.verify(postRequestedFor(urlEqualTo("/run")).withHeader("Authorization", equalTo("Bearer tok-123456"))
                .withHeader("Accept", equalTo("text/event-stream")));
        JsonNode body = new ObjectMapper().readTree(wiremock.getAllServeEvents().get(0).getRequest().getBodyAsString());
        assertThat(body.path("runId").asText()).isEqualTo("r1");
        assertThat(body.path("sessionId").asText()).isEqualTo("hs-9");
        assertThat(body.path("userMessage").asText()).isEqualTo("Write a haiku");
        assertThat(body.path("systemPrompt").asText()).isEqualTo("---\nname: Writer\ndescription: Writes well\n---\nBe concise.");
        assertThat(body.path("maxIterations").asInt()).isEqualTo(42);
        assertThat(body.path("modelConfig").path("model").asText()).isEqualTo("anthropic/claude-sonnet-4");
        assertThat(body.path("modelConfig").path("provider").asText()).isEqualTo("anthropic");
        assertThat(body.path("modelConfig").path("baseUrl").asText()).isEqualTo("https://llm.example/v1");
        assertThat(body.path("modelConfig").path("apiKey").asText()).isEqualTo("sk-test-abcdef");
        assertThat(body.path("hostTools").get(0).path("name").asText()).isEqualTo("lookup_order");
        assertThat(body.path("hostTools").get(0).path("parameters").path("type").asText()).isEqualTo("object");
        assertThat(body.path("context").path("page").asText()).isEqualTo("orders");
        assertThat(body.path("clientCapabilities")).as("the adapter answers approval frames and can send history")
                .containsExactly(new ObjectMapper().getNodeFactory().textNode("approvals"),
                        new ObjectMapper().getNodeFactory().textNode("history"));
        assertThat(body.has("history")).as("a session to continue: no conversation sent").isFalse();
    }
}
