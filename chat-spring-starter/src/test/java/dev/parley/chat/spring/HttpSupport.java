package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.json.ChatJson;
import java.io.BufferedReader;
import java.io.IOException;
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
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/** A small HTTP client over loopback for the starter's tests. */
final class HttpSupport {
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    record Reply(int status, String contentType, String body, java.net.http.HttpHeaders headers) {
        JsonNode json() {
            return ChatJson.shared().readTree(body);
        }
    }

    /** One SSE event as read off the wire. */
    record SseEvent(String id, String event, String data) {
        long seq() {
            return Long.parseLong(id);
        }

        boolean terminal() {
            return event.equals("run_finished") || event.equals("run_failed");
        }
    }

    private final String base;

    /** The origin of the server under test, as a page it served would send it. */
    String origin() {
        return base;
    }

    HttpSupport(int port) {
        this.base = "http://localhost:" + port;
    }

    Reply call(String owner, String method, String path, String body) {
        return send(owner, method, path, "application/json", body);
    }

    /** A request with this content type (null: no Content-Type header) and body (null: none). */
    Reply send(String owner, String method, String path, String contentType, String body) {
        return send(owner, method, path, contentType, body, null);
    }

    /** The same, with an {@code Origin} header as a browser sends it (null: none). */
    Reply send(String owner, String method, String path, String contentType, String body, String origin) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofSeconds(20))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody()
                        : HttpRequest.BodyPublishers.ofString(body));
        if (contentType != null) {
            request.header("Content-Type", contentType);
        }
        if (origin != null) {
            request.header("Origin", origin);
        }
        if (owner != null) {
            request.header("X-Parley-Owner", owner);
        }
        try {
            HttpResponse<String> response = HTTP.send(request.build(), HttpResponse.BodyHandlers.ofString());
            return new Reply(response.statusCode(), response.headers().firstValue("Content-Type").orElse(""),
                    response.body(), response.headers());
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    Reply get(String owner, String path) {
        return call(owner, "GET", path, null);
    }

    Reply post(String owner, String path, String body) {
        return call(owner, "POST", path, body);
    }

    /** Creates a session for {@code owner}; its id. */
    String newSession(String owner) {
        Reply created = post(owner, "/api/chat/sessions", "{}");
        assertThat(created.status()).as(created.body()).isEqualTo(201);
        return created.json().get("id").asText();
    }

    /** Starts a run with this message; its ticket. */
    JsonNode startRun(String owner, String sessionId, String message) {
        return startRun(owner, sessionId, Map.of("message", message));
    }

    /** Starts a run with this body (written as JSON); its ticket. */
    JsonNode startRun(String owner, String sessionId, Map<String, ?> body) {
        Reply started = post(owner, "/api/chat/sessions/" + sessionId + "/runs", ChatJson.shared().write(body));
        assertThat(started.status()).as(started.body()).isEqualTo(202);
        return started.json();
    }

    /** Waits up to 20 s for the run to have {@code status}; its state then. */
    JsonNode awaitState(String owner, String runId, String status) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        JsonNode state = get(owner, "/api/chat/runs/" + runId + "/state").json();
        while (!state.get("run").get("status").asText().equals(status)) {
            assertThat(System.nanoTime()).as("run %s to be %s, is %s", runId, status, state).isLessThan(deadline);
            Thread.sleep(10);
            state = get(owner, "/api/chat/runs/" + runId + "/state").json();
        }
        return state;
    }

    /** An open SSE response, read event by event. */
    final class Stream implements AutoCloseable {
        final HttpResponse<InputStream> response;
        final BufferedReader reader;
        final List<String> comments = new ArrayList<>();

        Stream(HttpResponse<InputStream> response) {
            this.response = response;
            this.reader = new BufferedReader(new InputStreamReader(response.body(), StandardCharsets.UTF_8));
        }

        /** The next event, or null when the server closed the stream. */
        SseEvent next() throws IOException {
            String id = null;
            String event = null;
            StringBuilder data = null;
            String line;
            while ((line = reader.readLine()) != null) {
                if (line.isEmpty()) {
                    if (data != null) {
                        return new SseEvent(id, event, data.toString());
                    }
                    continue;
                }
                if (line.startsWith(":")) {
                    comments.add(line);
                } else if (line.startsWith("id:")) {
                    id = line.substring(3).strip();
                } else if (line.startsWith("event:")) {
                    event = line.substring(6).strip();
                } else if (line.startsWith("data:")) {
                    String part = line.substring(5).startsWith(" ") ? line.substring(6) : line.substring(5);
                    data = data == null ? new StringBuilder(part) : data.append('\n').append(part);
                }
            }
            return null;
        }

        /** Reads events until {@code stop} says so (the stopping event included) or the stream ends. */
        List<SseEvent> readUntil(Predicate<SseEvent> stop) throws IOException {
            List<SseEvent> events = new ArrayList<>();
            SseEvent event;
            while ((event = next()) != null) {
                events.add(event);
                if (stop.test(event)) {
                    break;
                }
            }
            return events;
        }

        @Override
        public void close() throws IOException {
            response.body().close();
        }
    }

    Stream stream(String owner, String runId, String lastEventId) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + "/api/chat/runs/" + runId + "/stream"))
                .header("Accept", "text/event-stream").header("X-Parley-Owner", owner);
        if (lastEventId != null) {
            request.header("Last-Event-ID", lastEventId);
        }
        try {
            return new Stream(HTTP.send(request.build(), HttpResponse.BodyHandlers.ofInputStream()));
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
