package dev.parley.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.json.ChatJson;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;

/** The starter's REST endpoints over loopback HTTP, as a host's browser calls them. */
final class Rest {
    /** An answer: its status and its body (parsed when it is JSON). */
    record Answer(int status, String body) {
        JsonNode json() {
            try {
                return ChatJson.shared().readTree(body);
            } catch (RuntimeException e) {
                throw new AssertionError("not JSON (" + status + "): " + body, e);
            }
        }

        boolean ok() {
            return status >= 200 && status < 300;
        }
    }

    private static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String base;

    /** @param base the host's base URL, e.g. {@code http://127.0.0.1:8080} */
    Rest(String base) {
        this.base = base;
    }

    String base() {
        return base;
    }

    Answer get(String path) {
        return send(HttpRequest.newBuilder(URI.create(base + path)).GET());
    }

    /** True when {@code GET path} answers 200; false when it cannot connect (a host still starting). */
    boolean answers(String path) {
        try {
            HttpResponse<String> response = HTTP.send(HttpRequest.newBuilder(URI.create(base + path))
                    .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200;
        } catch (IOException notYet) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    Answer post(String path, @Nullable String json) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(base + path));
        if (json == null) {
            request.POST(HttpRequest.BodyPublishers.noBody());
        } else {
            request.header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(json));
        }
        return send(request);
    }

    /** A POST that must succeed; its JSON. */
    JsonNode postOk(String path, @Nullable String json) {
        Answer answer = post(path, json);
        if (!answer.ok()) {
            throw new AssertionError("POST " + path + " answered " + answer.status() + ": " + answer.body());
        }
        return answer.json();
    }

    /** A GET that must succeed; its JSON. */
    JsonNode getOk(String path) {
        Answer answer = get(path);
        if (!answer.ok()) {
            throw new AssertionError("GET " + path + " answered " + answer.status() + ": " + answer.body());
        }
        return answer.json();
    }

    String newSession() {
        return postOk("/api/chat/sessions", "{}").get("id").asText();
    }

    /** Starts a run; its id. */
    String startRun(String sessionId, String message) {
        return postOk("/api/chat/sessions/" + sessionId + "/runs", "{\"message\":" + quote(message) + "}")
                .get("runId").asText();
    }

    JsonNode state(String runId) {
        return getOk("/api/chat/runs/" + runId + "/state");
    }

    String status(String runId) {
        return state(runId).get("run").get("status").asText();
    }

    /** Polls the run's state until {@code condition} holds; fails after {@code timeout}. */
    JsonNode awaitState(String runId, Predicate<JsonNode> condition, Duration timeout, String what) {
        long deadline = System.nanoTime() + timeout.toNanos();
        JsonNode state = null;
        while (System.nanoTime() < deadline) {
            Answer answer = get("/api/chat/runs/" + runId + "/state");
            if (answer.ok()) {
                state = answer.json();
                if (condition.test(state)) {
                    return state;
                }
            }
            sleep(50);
        }
        throw new AssertionError("run " + runId + " did not get to " + what + " within " + timeout + "; last state "
                + state);
    }

    static boolean terminal(JsonNode state) {
        String status = state.get("run").get("status").asText();
        return status.equals("SUCCEEDED") || status.equals("FAILED") || status.equals("CANCELLED")
                || status.equals("INTERRUPTED");
    }

    static String quote(String text) {
        return ChatJson.shared().write(text);
    }

    static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static Answer send(HttpRequest.Builder request) {
        try {
            HttpResponse<String> response = HTTP.send(request.timeout(Duration.ofSeconds(30)).build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Answer(response.statusCode(), response.body());
        } catch (IOException e) {
            throw new UncheckedIOException(e.getMessage() + "; threads in " + ThreadDumps.write("rest"), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
