package dev.parley.chat.spring.internal.agui;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.spring.internal.InputBodies;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * An AG-UI {@code RunAgentInput}, as far as Parley reads it: the thread and run ids, the messages (text
 * only), the client's tools, its state and context, and the answers to interrupts ({@code resume}). Unknown
 * fields are ignored, as the protocol asks.
 *
 * @param state the client's state object, or an empty object when it sent none (or not an object)
 * @param context the {@code context[]} entries and the text of system and developer messages, for the runtime
 */
record AgUiInput(
        String threadId,
        String runId,
        List<Message> messages,
        List<HostToolSpec> tools,
        ObjectNode state,
        List<Object> context,
        List<Resume> resume) {

    /**
     * One message of the input: its id, role and text; {@code toolCallId} and {@code error} for a tool
     * message; {@code sent}, the message as the client sent it (to give back what Parley does not read).
     */
    record Message(String id, String role, String text, @Nullable String toolCallId, @Nullable String error,
            ObjectNode sent, List<AgUiParts.FilePart> files) {
        Message {
            files = List.copyOf(files);
        }

        boolean isUser() {
            return role.equals("user");
        }

        boolean isTool() {
            return role.equals("tool");
        }
    }

    /** An answer to an interrupt: {@code resolved} (with its payload, possibly null) or cancelled. */
    record Resume(String interruptId, boolean resolved, @Nullable JsonNode payload) {
    }

    AgUiInput {
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
        messages = List.copyOf(messages);
        tools = List.copyOf(tools);
        context = List.copyOf(context);
        resume = List.copyOf(resume);
    }

    /** The trailing user message: the new turn, if the input ends with one. */
    @Nullable Message trailingUser() {
        return messages.isEmpty() || !messages.get(messages.size() - 1).isUser() ? null : messages.get(messages.size() - 1);
    }

    /** The tool messages at the end of the input (answers to the page's tools), oldest first. */
    List<Message> trailingToolResults() {
        int start = messages.size();
        while (start > 0 && messages.get(start - 1).isTool()) {
            start--;
        }
        return messages.subList(start, messages.size());
    }

    /**
     * Reads a {@code RunAgentInput}.
     *
     * @throws ChatException INVALID_INPUT for a missing {@code threadId}, {@code runId} or {@code messages},
     *     a message without id or role, a user message with parts that are not text, a trailing user message
     *     without text, or malformed tools
     */
    static AgUiInput parse(JsonNode body) {
        String threadId = requiredString(body, "threadId");
        String runId = requiredString(body, "runId");
        JsonNode messages = body.get("messages");
        if (messages == null || !messages.isArray()) {
            throw ChatException.invalidInput("a RunAgentInput has \"messages\", an array");
        }
        List<Message> read = new ArrayList<>();
        List<Object> context = new ArrayList<>();
        for (JsonNode message : messages) {
            Message m = message(message);
            if (m.role().equals("system") || m.role().equals("developer")) {
                context.add(ChatJson.shared().convert(ChatJson.shared().objectNode().put("role", m.role())
                        .put("content", m.text()), Object.class));
            }
            read.add(m);
        }
        JsonNode contextEntries = body.get("context");
        if (contextEntries != null && contextEntries.isArray()) {
            for (JsonNode entry : contextEntries) {
                context.add(ChatJson.shared().convert(entry, Object.class));
            }
        }
        ObjectNode tools = ChatJson.shared().objectNode();
        JsonNode toolList = body.get("tools");
        if (toolList != null && !toolList.isNull()) {
            tools.set("clientTools", toolList);
        }
        if (!read.isEmpty() && read.get(read.size() - 1).isUser() && read.get(read.size() - 1).text().isBlank()) {
            throw ChatException.invalidInput("the trailing user message " + read.get(read.size() - 1).id()
                    + " has no text (files need a message to go with)");
        }
        JsonNode state = body.get("state");
        return new AgUiInput(threadId, runId, read,
                InputBodies.clientTools(tools), state != null && state.isObject() ? ((ObjectNode) state).deepCopy()
                        : ChatJson.shared().objectNode(), context, resume(body.get("resume")));
    }

    private static Message message(JsonNode message) {
        if (!message.isObject()) {
            throw ChatException.invalidInput("each of \"messages\" must be an object {id, role, content}");
        }
        String id = requiredString(message, "id");
        String role = requiredString(message, "role");
        List<AgUiParts.FilePart> files = new ArrayList<>();
        String text = content(message.get("content"), id, files);
        JsonNode toolCallId = message.get("toolCallId");
        JsonNode error = message.get("error");
        if (role.equals("tool") && (toolCallId == null || !toolCallId.isTextual())) {
            throw ChatException.invalidInput("tool message " + id + " has no \"toolCallId\"");
        }
        return new Message(id, role, text, toolCallId != null && toolCallId.isTextual() ? toolCallId.asText() : null,
                error != null && error.isTextual() ? error.asText() : null, ((ObjectNode) message).deepCopy(), files);
    }

    /**
     * A message's text: a string, or the text parts of a content array joined by newlines; its file parts
     * (image, audio, video, document, 0.0.59's binary) go to {@code files}.
     */
    private static String content(@Nullable JsonNode content, String id, List<AgUiParts.FilePart> files) {
        if (content == null || content.isNull()) {
            return "";
        }
        if (content.isTextual()) {
            return content.asText();
        }
        if (!content.isArray()) {
            throw ChatException.invalidInput("the content of message " + id + " must be a string or an array of parts");
        }
        StringBuilder text = new StringBuilder();
        for (JsonNode part : content) {
            JsonNode type = part.get("type");
            if (type != null && AgUiParts.isFile(type.asText())) {
                files.add(AgUiParts.file(part, id));
                continue;
            }
            if (type == null || !"text".equals(type.asText()) || !part.path("text").isTextual()) {
                throw ChatException.invalidInput("message " + id + " holds a part of type "
                        + (type == null ? "(none)" : type.asText()) + "; Parley takes text, image, audio, video, document"
                        + " and binary parts");
            }
            if (!text.isEmpty()) {
                text.append('\n');
            }
            text.append(part.get("text").asText());
        }
        return text.toString();
    }

    private static List<Resume> resume(@Nullable JsonNode resume) {
        if (resume == null || resume.isNull()) {
            return List.of();
        }
        if (!resume.isArray()) {
            throw ChatException.invalidInput("\"resume\" must be an array of {interruptId, status, payload?}");
        }
        List<Resume> entries = new ArrayList<>();
        for (JsonNode entry : resume) {
            String id = requiredString(entry, "interruptId");
            String status = requiredString(entry, "status");
            if (!status.equals("resolved") && !status.equals("cancelled")) {
                throw ChatException.invalidInput("the status of resume entry " + id
                        + " must be \"resolved\" or \"cancelled\", got \"" + status + "\"");
            }
            JsonNode payload = entry.get("payload");
            entries.add(new Resume(id, status.equals("resolved"), payload == null || payload.isNull() ? null : payload));
        }
        return entries;
    }

    private static String requiredString(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null || !value.isTextual() || value.asText().isBlank()) {
            throw ChatException.invalidInput("\"" + field + "\" must be a non-blank string");
        }
        return value.asText();
    }
}
