package dev.parley.example.managed;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.json.ChatJson;
import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The example app's chat API over real HTTP, as its page uses it. Not thread-safe: one test drives it. */
final class ChatApi {
    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final String base;

    ChatApi(int port) {
        this.base = "http://localhost:" + port;
    }

    /** What one turn streamed: its events' types in order, the answer's text deltas joined, and where it is kept. */
    record Turn(String sessionId, String runId, List<String> eventTypes, String streamedText) {
    }

    JsonNode call(String method, String path, String body) throws Exception {
        HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(method + " " + path + ": " + response.body()).isBetween(200, 299);
        return ChatJson.shared().readTree(response.body());
    }

    /** Starts {@code message} in a new conversation and reads the run's stream to its end. */
    Turn turn(String message) throws Exception {
        String session = call("POST", "/api/chat/sessions", "{}").get("id").asText();
        String body = JsonNodeFactory.instance.objectNode().put("message", message).toString();
        String runId = call("POST", "/api/chat/sessions/" + session + "/runs", body).get("runId").asText();
        List<String> types = new ArrayList<>();
        StringBuilder text = new StringBuilder();
        HttpResponse<InputStream> stream = HTTP.send(HttpRequest.newBuilder(URI.create(base + "/api/chat/runs/" + runId
                + "/stream")).timeout(Duration.ofSeconds(60)).header("Accept", "text/event-stream").build(),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(stream.statusCode()).isEqualTo(200);
        try (BufferedReader reader = new BufferedReader(new InputStreamReader(stream.body(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                if (!line.startsWith("data:")) {
                    continue;
                }
                AgentStreamEvent event = ChatJson.shared().readRunEvent(line.substring(5).strip()).event();
                types.add(event.type());
                if (event instanceof AgentStreamEvent.TextDelta delta) {
                    text.append(delta.delta());
                }
                if (event instanceof AgentStreamEvent.RunFinished || event instanceof AgentStreamEvent.RunFailed) {
                    break;
                }
            }
        }
        return new Turn(session, runId, types, text.toString());
    }

    /** The conversation as stored, oldest first. */
    JsonNode messages(String sessionId) throws Exception {
        return call("GET", "/api/chat/sessions/" + sessionId + "/messages", null).get("messages");
    }
}
