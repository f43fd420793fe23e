package dev.parley.chat.hermes.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.hermes.HermesModel;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.RunRequest;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The body of {@code POST /v1/runs} for one run, and how the run keeps the thread's memory:
 * <ul>
 *   <li>a run that continues the thread's session on a server that restores sessions (0.20 and later)
 *       sends {@code session_id} only;</li>
 *   <li>every other run (0.19, which never loads earlier turns from {@code session_id}; an edit or another
 *       branch, for which {@link RunRequest#runtimeSessionId()} is null, on any server) sends the thread's
 *       earlier turns as {@code conversation_history}, and a fresh session for a run that continues none.</li>
 * </ul>
 * Hermes stores in a session only the turns its runs added, never a {@code conversation_history} it was
 * given. A session the adapter starts without history ({@code parley-<uuid>}, a thread's first run) holds
 * the whole conversation; one it starts with history ({@code parley-h-<uuid>}, an edit) lacks what came
 * before, so its later runs send the history too, on every line.
 * History entries are {@code {role, content}} with both strings (the only shape 0.19 takes): the user's
 * messages and the assistant's answers, oldest first; tool steps are left out (0.19 cannot take them) and
 * so are answers without text.
 */
final class ApiServerRequests {

    /** A start request: its body, the session it names, and whether that session's turns come from Hermes. */
    record Start(ObjectNode body, String sessionId, boolean resumed, int historyTurns) {
    }

    /** A session the adapter started without history: Hermes holds all of its turns. */
    static final String FULL = "parley-";
    /** A session the adapter started with history: Hermes lacks the turns before its first run. */
    static final String PARTIAL = "parley-h-";

    private ApiServerRequests() {
    }

    static Start start(ObjectMapper json, RunRequest request, ApiServerProfile server, @Nullable HermesModel model,
            @Nullable String systemPrompt) {
        String continued = request.runtimeSessionId();
        boolean fromSession = continued != null && server.restoresSessionHistory() && !continued.startsWith(PARTIAL);
        ArrayNode history = fromSession ? json.createArrayNode() : history(json, request.history().messages());
        String session = continued != null ? continued : (history.isEmpty() ? FULL : PARTIAL) + UUID.randomUUID();
        ObjectNode body = json.createObjectNode();
        body.put("input", request.userMessage());
        body.put("session_id", session);
        if (!history.isEmpty()) {
            body.set("conversation_history", history);
        }
        if (systemPrompt != null) {
            body.put("instructions", systemPrompt);
        }
        if (model != null) {
            body.put("model", model.name());
            if (model.provider() != null) {
                body.put("provider", model.provider());
            }
        }
        return new Start(body, session, fromSession, history.size());
    }

    /** The user and assistant messages as {@code {role, content}} entries, oldest first. */
    static ArrayNode history(ObjectMapper json, List<Message> messages) {
        ArrayNode entries = json.createArrayNode();
        for (Message message : messages) {
            if (message instanceof UserMessage user) {
                entries.addObject().put("role", "user").put("content", user.text());
            } else if (message instanceof AssistantMessage answer && !answer.text().isBlank()) {
                entries.addObject().put("role", "assistant").put("content", answer.text());
            }
        }
        return entries;
    }
}
