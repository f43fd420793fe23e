package dev.parley.chat.testing.openai;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.agent.ModelCall;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.agent.ModelFailure;
import dev.parley.chat.agent.ModelMessage;
import dev.parley.chat.agent.ModelRequest;
import dev.parley.chat.agent.ModelResponse;
import dev.parley.chat.agent.ToolCall;
import dev.parley.chat.model.TokenUsage;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.testing.Await;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What every {@link ModelClient} adapter over an OpenAI-compatible server must do on the wire: stream text,
 * thinking and tool calls, send the conversation and the tools, map HTTP and connection failures to
 * {@link ModelFailure} kinds, and stop on cancel. An adapter's test extends this class once, returns its client
 * on a base URL from {@link #client(String)}, states where its library differs through the hooks, and adds its
 * own tests.
 */
public abstract class ModelClientWireContract extends OpenAiWire {
    protected static final HostToolSpec LOOKUP = new HostToolSpec("lookup_order", "Finds an order",
            "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}},\"required\":[\"id\"]}");
    protected static final HostToolSpec WEATHER = new HostToolSpec("weather", "Today's weather",
            "{\"$schema\":\"https://json-schema.org/draft/2020-12/schema\",\"title\":\"Weather\",\"type\":\"object\","
                    + "\"properties\":{\"city\":{\"type\":\"string\"},\"day\":{\"type\":\"string\",\"format\":\"date\"}}}");

    /** The adapter's client on an OpenAI-compatible server at {@code baseUrl}, with API key {@code sk-test-key}. */
    protected abstract ModelClient client(String baseUrl);

    /**
     * Asserts what the listener heard for two tool calls ({@code call_a} lookup_order {@code {"id":42}} in three
     * fragments, {@code call_b} weather {@code {"city":"Oslo"}} in two), up to and including {@code complete}:
     * libraries differ in whether they hand on the fragments or each call once it is complete.
     */
    protected abstract void assertToolCallSignals(List<String> signals);

    /** Asserts what the library made of {@link #WEATHER}'s 2020-12 schema ({@code $schema}, {@code title}). */
    protected abstract void assertWeatherSchemaAsSent(JsonNode parameters);

    protected static ModelRequest ask(String text, HostToolSpec... tools) {
        return new ModelRequest(null, null, List.of(new ModelMessage.User(text)), List.of(tools));
    }

    @Test
    void textInManyChunksStreamsPieceByPieceAndUsageComesFromTheLastChunk() throws Exception {
        String[] pieces = {"The", " order", " left", " our", " ware", "house", " on", " Mon", "day", " and", " arrives",
                " Thursday", "."};
        reply(sse(Sse.stream().text(pieces).finish("stop").usage(31, 13).done()));
        RecordingListener listener = new RecordingListener();

        client(baseUrl()).stream(new ModelRequest("gpt-test-mini", "You track parcels.",
                List.of(new ModelMessage.User("where?")), List.of()), listener);

        ModelResponse response = listener.response();
        List<String> expected = new ArrayList<>();
        for (String piece : pieces) {
            expected.add("text:" + piece);
        }
        expected.add("complete");
        assertThat(listener.signals).containsExactlyElementsOf(expected);
        assertThat(response.text()).isEqualTo(String.join("", pieces));
        assertThat(response.toolCalls()).isEmpty();
        assertThat(response.usage()).isEqualTo(new TokenUsage(31, 13, 44));
        assertThat(response.finishReason()).isEqualTo("stop");
        JsonNode sent = requests().get(0);
        assertThat(sent.path("model").asText()).isEqualTo("gpt-test-mini");
        assertThat(sent.path("stream").asBoolean()).isTrue();
        assertThat(sent.path("stream_options").path("include_usage").asBoolean()).isTrue();
        assertMessagesSent(sent.path("messages"),
                "[{\"role\":\"system\",\"content\":\"You track parcels.\"},{\"role\":\"user\",\"content\":\"where?\"}]");
    }

    @Test
    void reasoningContentStreamsAsThinkingBeforeTheAnswer() throws Exception {
        reply(sse(Sse.stream().reasoning("The user", " wants", " a greeting.").text("Hi", "!").finish("stop")
                .usage(5, 9).done()));
        RecordingListener listener = new RecordingListener();

        client(baseUrl()).stream(ask("hello"), listener);

        assertThat(listener.response().text()).isEqualTo("Hi!");
        assertThat(listener.signals).containsExactly("thinking:The user", "thinking: wants", "thinking: a greeting.",
                "text:Hi", "text:!", "complete");
    }

    @Test
    void twoToolCallsWhoseArgumentsArriveAcrossChunks() throws Exception {
        reply(sse(Sse.stream().toolCall(0, "call_a", "lookup_order", "{\"i", "d\":", "42}")
                .toolCall(1, "call_b", "weather", "{\"city\":", "\"Oslo\"}").finish("tool_calls").usage(80, 30).done()));
        RecordingListener listener = new RecordingListener();

        client(baseUrl()).stream(ask("order 42, and the weather in Oslo?", LOOKUP, WEATHER), listener);

        ModelResponse response = listener.response();
        assertThat(response.toolCalls()).containsExactly(new ToolCall("call_a", "lookup_order", "{\"id\":42}"),
                new ToolCall("call_b", "weather", "{\"city\":\"Oslo\"}"));
        assertThat(response.finishReason()).isEqualTo("tool_calls");
        assertToolCallSignals(listener.signals);
        assertThat(requests()).as("the client ran no tool and called the model no further").hasSize(1);
        JsonNode tools = requests().get(0).path("tools");
        assertThat(tools).hasSize(2);
        assertThat(tools.get(0).path("function").path("name").asText()).isEqualTo("lookup_order");
        assertThat(tools.get(0).path("function").path("parameters").path("required").toString()).isEqualTo("[\"id\"]");
        JsonNode weather = tools.get(1).path("function").path("parameters");
        assertThat(weather.path("properties").path("day").path("format").asText()).isEqualTo("date");
        assertWeatherSchemaAsSent(weather);
    }

    @Test
    void theConversationGoesOnTheWireWithToolCallsAndTheirResults() throws Exception {
        reply(sse(Sse.stream().text("Shipped.").finish("stop").done()));
        RecordingListener listener = new RecordingListener();
        ModelRequest request = new ModelRequest(null, null, List.of(new ModelMessage.User("order 42?"),
                new ModelMessage.Assistant("", List.of(new ToolCall("call_1", "lookup_order", "{\"id\":42}"))),
                new ModelMessage.ToolResult("call_1", "lookup_order", "{\"status\":\"shipped\"}", false)),
                List.of(LOOKUP));

        client(baseUrl()).stream(request, listener);

        assertThat(listener.response().text()).isEqualTo("Shipped.");
        JsonNode messages = requests().get(0).path("messages");
        assertThat(messages.get(1).path("role").asText()).isEqualTo("assistant");
        assertThat(messages.get(1).path("tool_calls").get(0).path("id").asText()).isEqualTo("call_1");
        assertThat(messages.get(1).path("tool_calls").get(0).path("function").path("arguments").asText())
                .isEqualTo("{\"id\":42}");
        assertThat(messages.get(2).path("role").asText()).isEqualTo("tool");
        assertThat(messages.get(2).path("tool_call_id").asText()).isEqualTo("call_1");
        assertThat(messages.get(2).path("content").asText()).isEqualTo("{\"status\":\"shipped\"}");
    }

    @Test
    void http429IsRateLimited() throws Exception {
        reply(aResponse().withStatus(429).withHeader("Content-Type", "application/json")
                .withBody("{\"error\":{\"message\":\"Rate limit reached for requests\",\"type\":\"requests\","
                        + "\"code\":\"rate_limit_exceeded\"}}"));
        RecordingListener listener = new RecordingListener();

        client(baseUrl()).stream(ask("hi"), listener);

        assertThat(listener.error()).isInstanceOfSatisfying(ModelFailure.class, failure -> {
            assertThat(failure.kind()).isEqualTo(ModelFailure.Kind.RATE_LIMITED);
            assertThat(failure.getMessage())
                    .isEqualTo("The model provider is limiting requests (HTTP 429): Rate limit reached for requests");
        });
        assertThat(listener.signals).containsExactly("error");
    }

    @Test
    void http401IsAuthenticationAndTheBodyIsNotQuoted() throws Exception {
        reply(aResponse().withStatus(401).withHeader("Content-Type", "application/json")
                .withBody("{\"error\":{\"message\":\"Incorrect API key provided: sk-test-key.\","
                        + "\"type\":\"invalid_request_error\",\"code\":\"invalid_api_key\"}}"));
        RecordingListener listener = new RecordingListener();

        client(baseUrl()).stream(ask("hi"), listener);

        assertThat(listener.error()).isInstanceOfSatisfying(ModelFailure.class, failure -> {
            assertThat(failure.kind()).isEqualTo(ModelFailure.Kind.AUTHENTICATION);
            assertThat(failure.getMessage()).doesNotContain("sk-test-key");
        });
    }

    @Test
    void aContextWindowErrorIsContextTooLong() throws Exception {
        reply(aResponse().withStatus(400).withHeader("Content-Type", "application/json")
                .withBody("{\"error\":{\"message\":\"This model's maximum context length is 8192 tokens. However, your"
                        + " messages resulted in 9120 tokens.\",\"type\":\"invalid_request_error\",\"param\":\"messages\","
                        + "\"code\":\"context_length_exceeded\"}}"));
        RecordingListener listener = new RecordingListener();

        client(baseUrl()).stream(ask("a very long question"), listener);

        assertThat(((ModelFailure) listener.error()).kind()).isEqualTo(ModelFailure.Kind.CONTEXT_TOO_LONG);
    }

    @Test
    void aRefusedConnectionIsUnreachable() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        RecordingListener listener = new RecordingListener();

        client("http://127.0.0.1:" + closedPort + "/v1").stream(ask("hi"), listener);

        assertThat(((ModelFailure) listener.error()).kind()).isEqualTo(ModelFailure.Kind.UNREACHABLE);
    }

    @Test
    void aStreamCutInTheMiddleKeepsWhatCameAndFailsOnce() throws Exception {
        String partial = Sse.stream().text("Your order", " is on").partial();
        reply(sse(partial).withHeader("Content-Length", String.valueOf(partial.length() + 4096)));
        RecordingListener listener = new RecordingListener();

        client(baseUrl()).stream(ask("where?"), listener);

        assertThat(((ModelFailure) listener.error()).kind()).isEqualTo(ModelFailure.Kind.UNREACHABLE);
        Thread.sleep(200);
        assertThat(listener.signals).containsExactly("text:Your order", "text: is on", "error");
    }

    @Test
    void aCancelMidStreamStopsTheStreamAndNothingIsRelayedAfterIt() throws Exception {
        String[] pieces = new String[40];
        for (int i = 0; i < pieces.length; i++) {
            pieces[i] = "word" + i + " ";
        }
        reply(sse(Sse.stream().text(pieces).finish("stop").done()).withChunkedDribbleDelay(40, 4000));
        RecordingListener listener = new RecordingListener();

        ModelCall call = client(baseUrl()).stream(ask("talk"), listener);
        Await.until(() -> listener.signals.size(), n -> n >= 1, "the first piece");
        call.cancel();
        int atCancel = listener.signals.size();
        Thread.sleep(600);

        assertThat(listener.signals).hasSize(atCancel).allMatch(s -> s.startsWith("text:"));
        assertThat(atCancel).isLessThan(pieces.length);
        assertThat(listener.completed).isNotDone();
        assertThat(listener.failed).isNotDone();
    }

    @Test
    void aCancelClosesTheConnection() throws Exception {
        try (HangUpServer server = new HangUpServer()) {
            RecordingListener listener = new RecordingListener();
            ModelCall call = client(server.baseUrl()).stream(ask("talk"), listener);
            Await.until(() -> listener.signals.size(), n -> n >= 2, "two pieces");

            long cancelledAt = System.nanoTime();
            call.cancel();

            long hungUpAt = server.hungUpAtNanos.get(5, TimeUnit.SECONDS);
            assertThat(TimeUnit.NANOSECONDS.toMillis(hungUpAt - cancelledAt)).isLessThan(2000);
            assertThat(listener.signals).allMatch(s -> s.startsWith("text:word"));
        }
    }
}
