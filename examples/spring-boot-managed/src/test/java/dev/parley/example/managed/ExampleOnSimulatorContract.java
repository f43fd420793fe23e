package dev.parley.example.managed;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The example app on the Bridge simulator, over real HTTP, on whatever database the subclass gives it: a turn
 * streams, the store keeps what it streamed, and the kinds of message a tool-using agent makes are stored and
 * read back. Each subclass starts the app with a fresh database, so the store's migrations run under Spring
 * Boot's Flyway every time.
 */
abstract class ExampleOnSimulatorContract {
    @LocalServerPort
    int port;

    @Test
    void aTurnStreamsAndIsStored() throws Exception {
        ChatApi api = new ChatApi(port);
        ChatApi.Turn turn = api.turn("Hello from a host on Spring Boot's own versions");

        assertThat(turn.eventTypes()).startsWith("run_started").contains("text_delta").endsWith("run_finished");
        assertThat(turn.streamedText()).contains("Hello from a host on Spring Boot's own versions");
        JsonNode messages = api.messages(turn.sessionId());
        assertThat(texts(messages, "user")).containsExactly("Hello from a host on Spring Boot's own versions");
        assertThat(texts(messages, "assistant")).containsExactly(turn.streamedText());
    }

    @Test
    void aTurnWithToolsAndATodoListIsStoredWithEveryStep() throws Exception {
        ChatApi api = new ChatApi(port);
        ChatApi.Turn turn = api.turn("use the tools, please");

        assertThat(turn.eventTypes()).contains("tool_call_start", "tool_call_result", "todos").endsWith("run_finished");
        JsonNode messages = api.messages(turn.sessionId());
        assertThat(types(messages)).contains("user", "thinking", "action_execution", "result", "todo", "assistant");
    }

    private static List<String> types(JsonNode messages) {
        List<String> types = new ArrayList<>();
        messages.forEach(message -> types.add(message.get("type").asText()));
        return types;
    }

    private static List<String> texts(JsonNode messages, String type) {
        List<String> texts = new ArrayList<>();
        messages.forEach(message -> {
            if (type.equals(message.get("type").asText())) {
                texts.add(message.get("text").asText());
            }
        });
        return texts;
    }
}
