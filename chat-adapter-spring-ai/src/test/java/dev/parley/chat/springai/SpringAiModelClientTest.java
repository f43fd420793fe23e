package dev.parley.chat.springai;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.agent.ModelFailure;
import dev.parley.chat.agent.ToolCall;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.testing.openai.ModelClientWireContract;
import dev.parley.chat.testing.openai.RecordingListener;
import dev.parley.chat.testing.openai.Sse;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.ai.openai.OpenAiChatOptions;
import org.springframework.ai.tool.ToolCallback;
import org.springframework.ai.tool.definition.ToolDefinition;

/** The Spring AI adapter against an OpenAI-compatible server on loopback, through Spring AI's OpenAI model. */
class SpringAiModelClientTest extends ModelClientWireContract {
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
}
