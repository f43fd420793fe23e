package dev.parley.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.Message;
import dev.parley.chat.reduce.RunReducer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/** Reading a run's whole log over HTTP, and holding the stored messages to it. */
final class Replays {
    private Replays() {
    }

    /**
     * A run's events from seq 0 to its terminal event over {@code GET …/stream}, reconnecting with the last
     * seq if the host cuts the stream before the end (a slow reader); events are kept as they arrived.
     */
    static List<SseClient.Event> readAll(String base, String runId) {
        List<SseClient.Event> events = new ArrayList<>();
        Long cursor = null;
        for (int attempt = 0; attempt < 20; attempt++) {
            try (SseClient.Stream stream = SseClient.open(base, "/api/chat/runs/" + runId + "/stream", cursor)) {
                SseClient.Event event;
                while ((event = stream.next()) != null) {
                    events.add(event);
                    cursor = event.seq();
                    if (event.terminal()) {
                        return events;
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException("reading run " + runId + " after seq " + cursor + " failed; threads in "
                        + ThreadDumps.write("replay-" + runId), e);
            }
        }
        throw new AssertionError("run " + runId + ": no terminal event in " + events.size() + " events");
    }

    /** The messages the events fold into, as the starter writes them. */
    static String folded(List<SseClient.Event> events) {
        RunReducer reducer = new RunReducer();
        for (SseClient.Event event : events) {
            reducer.apply(ChatJson.shared().readRunEvent(event.data()));
        }
        return ChatJson.shared().write(reducer.messages());
    }

    /** The stored messages of one run in its thread, as the starter writes them. */
    static String stored(Rest rest, String sessionId, String runId) {
        JsonNode view = rest.getOk("/api/chat/sessions/" + sessionId + "?limit=200");
        List<Message> messages = new ArrayList<>();
        for (JsonNode node : view.get("messages")) {
            Message message = ChatJson.shared().readMessage(node.toString());
            if (message.runId().equals(runId)) {
                messages.add(message);
            }
        }
        return ChatJson.shared().write(messages);
    }

    static RunEvent parse(SseClient.Event event) {
        return ChatJson.shared().readRunEvent(event.data());
    }
}
