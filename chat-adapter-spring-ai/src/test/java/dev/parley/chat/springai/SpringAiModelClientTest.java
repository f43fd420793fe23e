package dev.parley.chat.springai;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.agent.ModelFailure;
import dev.parley.chat.agent.ToolCall;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.testing.openai.ModelClientWireContract;
import dev.parley.chat.testing.openai.RecordingListener;
import dev.parley.chat.testing.openai.Sse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;

/** The Spring AI adapter against an OpenAI-compatible server on loopback, through Spring AI's OpenAI model. */
class SpringAiModelClientTest extends ModelClientWireContract {
    /** How often Spring AI's OpenAI model (over OpenAI's Java SDK) retries a 429 or 5xx when its options set no maxRetries. */
    private static final int RETRIES_BY_DEFAULT = 3;

    @Override
    protected ModelClient client(String baseUrl) {
        return SpringAiModelClient.of(OpenAiModels.model(baseUrl));
    }

    /** Spring AI hands on a tool call once it is complete; its ChatModel runs no tool (the contract checks that). */
    @Override
    protected void assertToolCallSignals(List<String> signals) {
        assertThat(signals).as("Spring AI hands on a tool call once it is complete").containsExactly(
                "tool:0:call_a:lookup_order:{\"id\":42}", "tool:1:call_b:weather:{\"city\":\"Oslo\"}", "complete");
    }

    /** Spring AI passes the schema on as it is. */
    @Override
    protected void assertWeatherSchemaAsSent(JsonNode parameters) {
        assertThat(parameters.path("type").asText()).isEqualTo("object");
    }

    @Test
    void theRunsToolsReplaceAnyTheOptionsCarryAndNoneIsRun() throws Exception {
        reply(sse(Sse.stream().toolCall(0, "call_x", "delete_everything", "{}").finish("tool_calls").done()));
        List<String> ran = new CopyOnWriteArrayList<>();
        ToolCallback preset = new ToolCallback() {
            @Override
            public ToolDefinition getToolDefinition() {
                return ToolDefinition.builder().name("delete_everything").description("Deletes").inputSchema("{}")
                        .build();
            }

            @Override
            public String call(String toolInput) {
                ran.add(toolInput);
                return "deleted";
            }
        };
        SpringAiModelClient withPreset = SpringAiModelClient.builder(OpenAiModels.model(baseUrl()))
                .options(OpenAiChatOptions.builder().model("gpt-preset").toolCallbacks(List.of(preset)).build()).build();
        RecordingListener listener = new RecordingListener();

        withPreset.stream(ask("tidy up", LOOKUP), listener);

        assertThat(listener.response().toolCalls()).extracting(ToolCall::name).containsExactly("delete_everything");
        assertThat(ran).isEmpty();
        JsonNode sent = requests().get(0);
        assertThat(sent.path("model").asText()).isEqualTo("gpt-preset");
        assertThat(sent.path("tools")).extracting(t -> t.path("function").path("name").asText())
                .containsExactly("lookup_order");
    }

    @Test
    void aToolSchemaThatIsNotJsonIsAnInvalidRequestAndNothingIsSent() throws Exception {
        RecordingListener listener = new RecordingListener();

        client(baseUrl()).stream(ask("hi", new HostToolSpec("list", "a list", "{type: array")), listener);

        assertThat(((ModelFailure) listener.error()).kind()).isEqualTo(ModelFailure.Kind.INVALID_REQUEST);
        assertThat(requests()).isEmpty();
    }

    @Test
    void aRateLimitsRetryAfterIsKeptOnTheFailure() throws Exception {
        reply(aResponse().withStatus(429).withHeader("Content-Type", "application/json").withHeader("Retry-After", "20")
                .withBody("{\"error\":{\"message\":\"Rate limit reached\"}}"));
        RecordingListener listener = new RecordingListener();

        client(baseUrl()).stream(ask("hi"), listener);

        assertThat(listener.error()).isInstanceOfSatisfying(ModelFailure.class, failure -> {
            assertThat(failure.kind()).isEqualTo(ModelFailure.Kind.RATE_LIMITED);
            assertThat(failure.retryAfter()).isEqualTo(Duration.ofSeconds(20));
            assertThat(failure.getMessage()).endsWith("Rate limit reached (retry after 20 s)");
        });
    }

    @Test
    void springAisOpenAiModelRetriesARateLimitItselfBeforeTheFailureReachesParley() throws Exception {
        reply(aResponse().withStatus(429).withHeader("Content-Type", "application/json").withHeader("Retry-After", "0")
                .withBody("{\"error\":{\"message\":\"Rate limit reached\"}}"));
        RecordingListener listener = new RecordingListener();
        OpenAiChatModel defaults = OpenAiChatModel.builder().options(OpenAiChatOptions.builder().baseUrl(baseUrl())
                .apiKey("sk-test-key").model("gpt-test").timeout(Duration.ofSeconds(10)).build()).build();

        SpringAiModelClient.of(defaults).stream(ask("hi"), listener);

        assertThat(((ModelFailure) listener.error()).kind()).isEqualTo(ModelFailure.Kind.RATE_LIMITED);
        assertThat(requests()).as("the first request and the OpenAI SDK's default retries").hasSize(RETRIES_BY_DEFAULT + 1);
    }
}
