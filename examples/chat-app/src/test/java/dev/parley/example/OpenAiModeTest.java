package dev.parley.example;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.testing.openai.Sse;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The example app with {@code parley.example.runtime=openai} against an OpenAI-compatible server on loopback: no
 * simulator, and a turn typed into the chat API streams the model's answer back over SSE.
 */
@SpringBootTest(classes = ExampleApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"parley.example.runtime=openai", "parley.example.openai.model=llama3.2",
            "spring.datasource.url=jdbc:sqlite:target/openai-mode.db"})
class OpenAiModeTest {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private static final WireMockServer OLLAMA = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));

    static {
        OLLAMA.start();
    }

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void server(DynamicPropertyRegistry registry) {
        registry.add("parley.example.openai.base-url", () -> "http://127.0.0.1:" + OLLAMA.port() + "/v1");
    }

    @AfterAll
    static void stopServer() {
        OLLAMA.stop();
    }

    private JsonNode call(String method, String path, String body) throws Exception {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .timeout(Duration.ofSeconds(20)).header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isBetween(200, 299);
        return ChatJson.shared().readTree(response.body());
    }

    @Test
    void aTurnRunsOnTheModelAndStreamsBack() throws Exception {
        OLLAMA.resetAll();
        OLLAMA.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream")
                .withBody(Sse.stream().reasoning("The user greets.").text("Hello! ", "How can I help?")
                        .finish("stop").usage(9, 6).done())));

        JsonNode info = call("GET", "/api/example/info", null);
        assertThat(info.get("runtime").asText()).isEqualTo("openai");
        assertThat(info.get("pageTools").asBoolean()).as("the agent loop calls the page's tool").isTrue();
        String session = call("POST", "/api/chat/sessions", "{}").get("id").asText();
        String runId = call("POST", "/api/chat/sessions/" + session + "/runs", "{\"message\":\"hi there\"}")
                .get("runId").asText();

        StringBuilder answer = new StringBuilder();
        StringBuilder thinking = new StringBuilder();
        String last = null;
        HttpResponse<InputStream> stream = HTTP.send(HttpRequest.newBuilder(
                URI.create("http://localhost:" + port + "/api/chat/runs/" + runId + "/stream"))
                .header("Accept", "text/event-stream").build(), HttpResponse.BodyHandlers.ofInputStream());
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                if (line.startsWith("event:")) {
                    last = line.substring(6).strip();
                } else if (line.startsWith("data:")) {
                    AgentStreamEvent event = ChatJson.shared().readRunEvent(line.substring(5).strip()).event();
                    if (event instanceof AgentStreamEvent.TextDelta text) {
                        answer.append(text.delta());
                    } else if (event instanceof AgentStreamEvent.ThinkingDelta thought) {
                        thinking.append(thought.delta());
                    }
                    if ("run_finished".equals(last) || "run_failed".equals(last)) {
                        break;
                    }
                }
            }
        }
        assertThat(last).isEqualTo("run_finished");
        assertThat(answer).hasToString("Hello! How can I help?");
        assertThat(thinking).hasToString("The user greets.");

        var requests = OLLAMA.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions")));
        assertThat(requests).hasSize(1);
        JsonNode request = ChatJson.shared().readTree(requests.get(0).getBodyAsString());
        assertThat(request.get("model").asText()).isEqualTo("llama3.2");
        assertThat(request.get("stream").asBoolean()).isTrue();
    }

    @Test
    void anAnswerCutAtTheModelsLengthLimitIsMarkedTruncatedForThePage() throws Exception {
        OLLAMA.resetAll();
        OLLAMA.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream")
                .withBody(Sse.stream().text("The three reasons are: first, ").finish("length").usage(9, 6).done())));

        String session = call("POST", "/api/chat/sessions", "{}").get("id").asText();
        JsonNode ticket = call("POST", "/api/chat/sessions/" + session + "/runs", "{\"message\":\"why?\"}");
        String runId = ticket.get("runId").asText();
        long until = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        JsonNode state = call("GET", "/api/chat/runs/" + runId + "/state", null);
        while (!state.get("run").get("status").asText().equals("SUCCEEDED") && System.nanoTime() < until) {
            Thread.sleep(50);
            state = call("GET", "/api/chat/runs/" + runId + "/state", null);
        }
        assertThat(state.get("run").get("status").asText()).isEqualTo("SUCCEEDED");

        JsonNode answer = null;
        for (JsonNode message : call("GET", "/api/chat/sessions/" + session, null).get("messages")) {
            if (message.get("id").asText().equals(ticket.get("assistantMessageId").asText())) {
                answer = message;
            }
        }
        assertThat(answer).as("the answer in the session").isNotNull();
        assertThat(answer.get("text").asText()).isEqualTo("The three reasons are: first, ");
        assertThat(answer.get("truncated").asBoolean()).as("the field the page shows").isTrue();
    }
}
