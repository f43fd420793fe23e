package dev.parley.chat.spring;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.stubbing.Scenario;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.testing.openai.Sse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A run through the starter's HTTP endpoints on the agent loop over the application's LangChain4j model bean, which
 * streams from an OpenAI-compatible server on loopback: a host action called, its result fed back, the answer
 * streamed over SSE.
 */
@SpringBootTest(classes = ModelRuntimeHttpTest.ModelApplication.class,
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"parley.owner.mode=HEADER", "parley.agent.models[0].id=llama3.2"})
class ModelRuntimeHttpTest {
    private static final String COMPLETIONS = "/v1/chat/completions";
    private static final WireMockServer OPENAI = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));

    static {
        OPENAI.start();
    }

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void openAi(DynamicPropertyRegistry registry) {
        registry.add("test.openai.base-url", () -> "http://127.0.0.1:" + OPENAI.port() + "/v1");
    }

    @AfterAll
    static void stopServer() {
        OPENAI.stop();
    }

    /** A host that has a LangChain4j model and one host action: nothing of Parley's but the starter. */
    @SpringBootConfiguration
    @EnableAutoConfiguration
    static class ModelApplication {
        @Bean
        StreamingChatModel streamingChatModel(@Value("${test.openai.base-url}") String baseUrl) {
            return OpenAiStreamingChatModel.builder().baseUrl(baseUrl).apiKey("sk-test-key").modelName("default-model")
                    .timeout(Duration.ofSeconds(10)).build();
        }

        @Bean
        HostAction orderStatus() {
            return new HostAction(new HostToolSpec("order_status", "Tells where an order is",
                    "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}}}"),
                    call -> "{\"status\":\"shipped\"}");
        }
    }

    @Test
    void aTurnStreamsOverSseWithAHostActionInTheMiddle() throws Exception {
        OPENAI.stubFor(post(urlEqualTo(COMPLETIONS)).inScenario("turn").whenScenarioStateIs(Scenario.STARTED)
                .willSetStateTo("answer").willReturn(sse(Sse.stream()
                        .toolCall(0, "call_1", "order_status", "{\"id\":", "7}").finish("tool_calls").usage(20, 6).done())));
        OPENAI.stubFor(post(urlEqualTo(COMPLETIONS)).inScenario("turn").whenScenarioStateIs("answer")
                .willReturn(sse(Sse.stream().text("Order 7 ", "has ", "shipped.").finish("stop").usage(30, 5).done())));
        HttpSupport http = new HttpSupport(port);

        JsonNode models = http.get("ann", "/api/chat/models").json();
        assertThat(models.toString()).contains("llama3.2");
        String session = http.newSession("ann");
        String runId = http.startRun("ann", session, Map.of("message", "where is order 7?", "modelId", "llama3.2"))
                .get("runId").asText();

        List<HttpSupport.SseEvent> events;
        try (HttpSupport.Stream stream = http.stream("ann", runId, null)) {
            events = stream.readUntil(HttpSupport.SseEvent::terminal);
        }
        assertThat(events).last().satisfies(e -> assertThat(e.event()).isEqualTo("run_finished"));
        List<String> types = events.stream().map(HttpSupport.SseEvent::event).collect(Collectors.toList());
        assertThat(types).contains("tool_call_start", "tool_call_result", "text_delta");
        String streamed = events.stream().map(e -> ChatJson.shared().readRunEvent(e.data()).event())
                .filter(AgentStreamEvent.TextDelta.class::isInstance)
                .map(e -> ((AgentStreamEvent.TextDelta) e).delta()).collect(Collectors.joining());
        assertThat(streamed).isEqualTo("Order 7 has shipped.");

        JsonNode state = http.awaitState("ann", runId, "SUCCEEDED");
        assertThat(state.get("run").get("usage").get("inputTokens").asLong()).isEqualTo(50);

        var requests = OPENAI.findAll(postRequestedFor(urlEqualTo(COMPLETIONS)));
        assertThat(requests).hasSize(2);
        JsonNode second = ChatJson.shared().readTree(requests.get(1).getBodyAsString());
        assertThat(second.get("model").asText()).isEqualTo("llama3.2");
        JsonNode toolMessage = second.get("messages").get(second.get("messages").size() - 1);
        assertThat(toolMessage.get("role").asText()).isEqualTo("tool");
        assertThat(toolMessage.get("content").asText()).contains("shipped");
    }

    private static com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder sse(String body) {
        return aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream").withBody(body);
    }
}
