package dev.parley.chat.hermes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/** One run of {@link HermesApiStub}: what it was asked, the history its agent sees, its stream and its state. */
final class StubRun {
    private static final ObjectMapper JSON = new ObjectMapper();

    final String id;
    final JsonNode body;
    final List<JsonNode> history;
    final BlockingQueue<String> queue = new LinkedBlockingQueue<>();
    final AtomicBoolean subscribed = new AtomicBoolean();
    final List<Waiting> approvals = new CopyOnWriteArrayList<>();
    final CountDownLatch stop = new CountDownLatch(1);
    volatile Waiting clarify;
    private final ObjectNode status;

    StubRun(String id, JsonNode body, List<JsonNode> history) {
        this.id = id;
        this.body = body;
        this.history = history;
        this.status = JSON.createObjectNode().put("object", "hermes.run").put("run_id", id).put("status", "queued")
                .put("session_id", body.path("session_id").asText(id));
    }

    /** The question's content: the text {@code input}, or the content of its last item (text or parts). */
    JsonNode question() {
        JsonNode input = body.path("input");
        return input.isArray() ? input.get(input.size() - 1).path("content") : input;
    }

    /** The question's text: the text {@code input}, or its last item's text parts, joined by new lines. */
    String questionText() {
        JsonNode question = question();
        if (!question.isArray()) {
            return question.asText();
        }
        List<String> texts = new java.util.ArrayList<>();
        question.forEach(part -> {
            if ("text".equals(part.path("type").asText())) {
                texts.add(part.path("text").asText());
            }
        });
        return String.join("\n", texts);
    }

    /** The earlier user turns the agent saw. */
    long userTurnsSeen() {
        return history.stream().filter(h -> "user".equals(h.path("role").asText())).count();
    }

    List<String> userTurns() {
        return history.stream().filter(h -> "user".equals(h.path("role").asText())).map(h -> h.path("content").asText())
                .toList();
    }

    synchronized boolean ended() {
        return List.of("completed", "failed", "cancelled").contains(status.path("status").asText());
    }

    /** Sets the pollable status (and the output, if not null). */
    synchronized void status(String value, String output) {
        status.put("status", value);
        if (output != null) {
            status.put("output", output);
        }
    }

    synchronized String statusJson() {
        return status.toString();
    }

    /** Queues an event for the subscriber, stamped with this run's id. */
    void push(JsonNode event) {
        ObjectNode copy = event.deepCopy();
        copy.put("run_id", id);
        queue.add(copy.toString());
    }

    /** A question the agent waits on: its id (if the fixture gave one) and how it was answered. */
    static final class Waiting {
        final String id;
        final CountDownLatch answered = new CountDownLatch(1);
        volatile String answer;

        Waiting(String id) {
            this.id = id;
        }
    }
}
