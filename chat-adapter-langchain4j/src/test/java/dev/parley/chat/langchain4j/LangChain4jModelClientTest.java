package dev.parley.chat.langchain4j;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.agent.ModelFailure;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.testing.openai.ModelClientWireContract;
import dev.parley.chat.testing.openai.RecordingListener;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The LangChain4j adapter against an OpenAI-compatible server on loopback, through LangChain4j's OpenAI model. */
class LangChain4jModelClientTest extends ModelClientWireContract {
    @Override
    protected ModelClient client(String baseUrl) {
        return LangChain4jModelClient.of(OpenAiModels.model(baseUrl));
    }

    /** LangChain4j hands on each fragment of a tool call's arguments as it arrives. */
    @Override
    protected void assertToolCallSignals(List<String> signals) {
        assertThat(signals).containsExactly("tool:0:call_a:lookup_order:{\"i",
                "tool:0:call_a:lookup_order:d\":", "tool:0:call_a:lookup_order:42}", "tool:1:call_b:weather:{\"city\":",
                "tool:1:call_b:weather:\"Oslo\"}", "complete");
    }

    /** LangChain4j's own schema model drops {@code $schema}. */
    @Override
    protected void assertWeatherSchemaAsSent(JsonNode parameters) {
        assertThat(parameters.has("$schema")).isFalse();
    }

    /** LangChain4j writes each message's keys in one order: the text is compared, not only the tree. */
    @Override
    protected void assertMessagesSent(JsonNode messages, String expected) {
        assertThat(messages.toString()).isEqualTo(expected);
    }

    @Test
    void aToolSchemaLangChain4jCannotTakeIsAnInvalidRequestAndNothingIsSent() throws Exception {
        RecordingListener listener = new RecordingListener();

        client(baseUrl()).stream(ask("hi", new HostToolSpec("list", "a list", "{\"type\":\"array\"}")), listener);

        assertThat(((ModelFailure) listener.error()).kind()).isEqualTo(ModelFailure.Kind.INVALID_REQUEST);
        assertThat(requests()).isEmpty();
    }

    @Test
    void langChain4jDoesNotRetryARateLimitTheFailureComesAtOnce() throws Exception {
        reply(aResponse().withStatus(429).withHeader("Content-Type", "application/json").withHeader("Retry-After", "0")
                .withBody("{\"error\":{\"message\":\"Rate limit reached\"}}"));
        RecordingListener listener = new RecordingListener();

        client(baseUrl()).stream(ask("hi"), listener);

        assertThat(((ModelFailure) listener.error()).kind()).isEqualTo(ModelFailure.Kind.RATE_LIMITED);
        assertThat(requests()).as("LangChain4j's streaming models make one request").hasSize(1);
    }
}
