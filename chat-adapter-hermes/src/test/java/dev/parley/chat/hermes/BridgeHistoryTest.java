package dev.parley.chat.hermes;

import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.testing.StreamCollector;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.StatusMessage;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.ConversationHistory;
import dev.parley.chat.runtime.RunRequest;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** The history addition: the conversation goes along only when there is no session, or the Bridge asks (410). */
class BridgeHistoryTest extends AdapterTestSupport {
    private static final Instant T = Instant.parse("2026-01-01T00:00:00Z");
    private static final List<Message> TURNS = List.of(
            new UserMessage("u1", "t1", "r0", null, MessageStatus.COMPLETED, T, "What is in /tmp?"),
            new AssistantMessage("a1", "t1", "r0", "u1", MessageStatus.COMPLETED, T, "Two files.", null, null),
            new ActionExecutionMessage("x1", "t1", "r0", "a1", MessageStatus.COMPLETED, T, "call_1", "terminal",
                    "{\"command\":\"ls /tmp\"}"),
            new ResultMessage("y1", "t1", "r0", "x1", MessageStatus.COMPLETED, T, "call_1", "terminal", "a b", false),
            new StatusMessage("s1", "t1", "r0", "a1", MessageStatus.COMPLETED, T, "info", "not sent"));

    private final AtomicInteger reads = new AtomicInteger();

    private RunRequest request(String session) {
        ConversationHistory history = () -> {
            reads.incrementAndGet();
            return TURNS;
        };
        return new RunRequest("t1", "r1", "alice", "r1:answer", "And now?", session, null, null, null, List.of(),
                Map.of(), history);
    }

    private List<JsonNode> bodies() throws Exception {
        ObjectMapper json = new ObjectMapper();
        List<JsonNode> bodies = new java.util.ArrayList<>();
        for (var event : wiremock.findAll(postRequestedFor(urlEqualTo("/run")))) {
            bodies.add(json.readTree(event.getBodyAsString()));
        }
        return bodies;
    }

    @Test
    void aRunWithoutASessionSendsTheConversation() throws Exception {
        wiremock.stubFor(post("/run").willReturn(sse("bridge/fresh-session.sse")));

        StreamCollector.collect(adapter().generateResponse(request(null)));

        JsonNode body = bodies().get(0);
        assertThat(body.path("clientCapabilities").toString()).isEqualTo("[\"approvals\",\"history\"]");
        assertThat(body.path("history").toString()).isEqualTo("[{\"role\":\"user\",\"text\":\"What is in /tmp?\"},"
                + "{\"role\":\"assistant\",\"text\":\"Two files.\"},"
                + "{\"role\":\"tool_call\",\"toolCallId\":\"call_1\",\"toolName\":\"terminal\",\"args\":\"{\\\"command\\\":\\\"ls /tmp\\\"}\"},"
                + "{\"role\":\"tool_result\",\"toolCallId\":\"call_1\",\"toolName\":\"terminal\",\"result\":\"a b\",\"isError\":false}]");
    }

    @Test
    void aSessionTheBridgeHoldsIsContinuedWithoutReadingTheConversation() throws Exception {
        wiremock.stubFor(post("/run").willReturn(sse("bridge/fresh-session.sse")));

        StreamCollector.collect(adapter().generateResponse(request("hs-9")));

        assertThat(bodies().get(0).has("history")).isFalse();
        assertThat(reads).hasValue(0);
    }

    @Test
    void aSessionTheBridgeLostIsRebuiltFromTheConversationWithoutAWarning() throws Exception {
        wiremock.stubFor(post("/run").atPriority(1).withRequestBody(matchingJsonPath("$.sessionId", equalTo("hs-gone")))
                .willReturn(errorBody(410, "SESSION_NOT_FOUND", "send the history")));
        wiremock.stubFor(post("/run").atPriority(5).willReturn(sse("bridge/fresh-session.sse")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().generateResponse(request("hs-gone")));

        assertThat(events).first().isEqualTo(new AgentStreamEvent.RuntimeSession("hs-new", false));
        assertThat(events).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        List<JsonNode> bodies = bodies();
        assertThat(bodies).hasSize(2);
        assertThat(bodies.get(0).has("history")).isFalse();
        assertThat(bodies.get(1).path("sessionId").isNull()).isTrue();
        assertThat(bodies.get(1).path("history")).hasSize(4);
        assertThat(reads).hasValue(1);
    }
}
