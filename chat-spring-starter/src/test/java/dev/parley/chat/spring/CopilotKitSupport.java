package dev.parley.chat.spring;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.json.ChatJson;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;

/**
 * Speaks CopilotKit's runtime protocol to the starter over loopback, as CopilotKit's front end does: JSON
 * bodies, AG-UI event streams of {@code data:} frames read event by event, the owner in a header (the tests
 * let the endpoint trust it, as behind a proxy that sets it).
 */
final class CopilotKitSupport {
    static final String BASE = "/api/chat/copilotkit";

    final HttpSupport http;
    private final int port;

    CopilotKitSupport(int port) {
        this.http = new HttpSupport(port);
        this.port = port;
    }

    /** A {@code RunAgentInput} for the thread with these messages (JSON objects) and extra fields. */
    static String input(String threadId, List<?> messages, Map<String, ?> extra) {
        Map<String, Object> input = new java.util.LinkedHashMap<>();
        input.put("threadId", threadId);
        input.put("runId", UUID.randomUUID().toString());
        input.put("messages", messages);
        input.put("tools", List.of());
        input.put("context", List.of());
        input.put("state", Map.of());
        input.put("forwardedProps", Map.of());
        input.putAll(extra);
        return ChatJson.shared().write(input);
    }

    static Map<String, Object> user(String id, String text) {
        return Map.of("id", id, "role", "user", "content", text);
    }

    /** The events of a whole AG-UI answer. */
    static List<JsonNode> events(String body) {
        return Arrays.stream(body.split("\n\n")).filter(f -> f.startsWith("data: "))
                .map(f -> ChatJson.shared().readTree(f.substring("data: ".length()))).toList();
    }

    static List<String> types(List<JsonNode> events) {
        return events.stream().map(e -> e.get("type").asText()).toList();
    }

    /** The text the answer's TEXT_MESSAGE_CONTENT events hold, in order. */
    static String text(List<JsonNode> events) {
        StringBuilder text = new StringBuilder();
        events.stream().filter(e -> e.get("type").asText().equals("TEXT_MESSAGE_CONTENT"))
                .forEach(e -> text.append(e.get("delta").asText()));
        return text.toString();
    }

    HttpSupport.Reply post(String owner, String path, String body) {
        return http.post(owner, BASE + path, body);
    }

    /** Runs a whole turn; its events. */
    List<JsonNode> run(String owner, String input) {
        HttpSupport.Reply reply = post(owner, "/agent/default/run", input);
        if (reply.status() != 200) {
            throw new AssertionError("run answered " + reply.status() + ": " + reply.body());
        }
        return events(reply.body());
    }

    /** A whole connect; its events. */
    List<JsonNode> connect(String owner, String threadId) {
        HttpSupport.Reply reply = post(owner, "/agent/default/connect", input(threadId, List.of(), Map.of()));
        if (reply.status() != 200) {
            throw new AssertionError("connect answered " + reply.status() + ": " + reply.body());
        }
        return events(reply.body());
    }

    /** A POST whose event stream is read as it comes. */
    Open open(String owner, String path, String body) {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + BASE + path))
                .timeout(Duration.ofSeconds(30)).header("Content-Type", "application/json")
                .header("Accept", "text/event-stream").header("X-Parley-Owner", owner)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        try {
            HttpResponse<InputStream> response = HttpSupport.HTTP.send(request, HttpResponse.BodyHandlers.ofInputStream());
            return new Open(http.new Stream(response));
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    /** An open AG-UI event stream. */
    static final class Open implements AutoCloseable {
        final HttpSupport.Stream stream;
        final List<JsonNode> seen = new ArrayList<>();

        Open(HttpSupport.Stream stream) {
            this.stream = stream;
        }

        /** Reads events until one of type {@code type} (included); all read so far. */
        List<JsonNode> until(String type) throws IOException {
            return until(e -> e.get("type").asText().equals(type));
        }

        List<JsonNode> until(Predicate<JsonNode> stop) throws IOException {
            HttpSupport.SseEvent event;
            while ((event = stream.next()) != null) {
                JsonNode json = ChatJson.shared().readTree(event.data());
                seen.add(json);
                if (stop.test(json)) {
                    return seen;
                }
            }
            throw new AssertionError("the stream ended before the awaited event; it sent " + types(seen));
        }

        /** Reads to the end of the stream (the server closes it); everything read. */
        List<JsonNode> toEnd() throws IOException {
            HttpSupport.SseEvent event;
            while ((event = stream.next()) != null) {
                seen.add(ChatJson.shared().readTree(event.data()));
            }
            return seen;
        }

        @Override
        public void close() throws IOException {
            stream.close();
        }
    }
}
