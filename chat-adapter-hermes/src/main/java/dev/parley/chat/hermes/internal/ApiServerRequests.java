package dev.parley.chat.hermes.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.hermes.HermesModel;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.RunRequest;
import java.util.Base64;
import java.util.List;
import java.util.Set;
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
 *
 * <p>Images: the question's images go as {@code image_url} parts of a data URL, after its text, in the one item of
 * an {@code input} array ({@code [{role: user, content: [{type: text, …}, {type: image_url, …}]}]}); without
 * images {@code input} stays the plain text. Only that last input item reaches the agent as parts: Hermes
 * flattens earlier items and {@code conversation_history} to text, so an earlier message's files are named in its
 * history entry ({@code [image: cat.png]}) and never sent again. Hermes takes at most
 * {@value #MAX_REQUEST_BYTES} bytes per request; a start with images that would be larger is refused here.
 */
final class ApiServerRequests {

    /** A start request: its body, the session it names, and whether that session's turns come from Hermes. */
    record Start(ObjectNode body, String sessionId, boolean resumed, int historyTurns, int images) {
    }

    /** The largest request body Hermes' API server reads ({@code MAX_REQUEST_BYTES}, 10 MB). */
    static final int MAX_REQUEST_BYTES = 10_000_000;

    /** The image types Hermes' API server takes as data URLs (its agent passes them to the model as they are). */
    static final Set<String> IMAGE_TYPES = Set.of("image/png", "image/jpeg", "image/gif", "image/webp");

    /** What the API server transport declares: images only. */
    static final AttachmentSupport ATTACHMENTS = new AttachmentSupport(IMAGE_TYPES, "Hermes' API server takes images"
            + " only (PNG, JPEG, GIF, WebP); other files are not supported on this endpoint");

    /** A session the adapter started without history: Hermes holds all of its turns. */
    static final String FULL = "parley-";
    /** A session the adapter started with history: Hermes lacks the turns before its first run. */
    static final String PARTIAL = "parley-h-";

    private ApiServerRequests() {
    }

    /**
     * The start request of a run.
     *
     * @throws ChatException as reading the conversation so far or an image fails; TOO_LARGE if its images make the
     *     request larger than Hermes reads
     */
    static Start start(ObjectMapper json, RunRequest request, ApiServerProfile server, @Nullable HermesModel model,
            @Nullable String systemPrompt) {
        String continued = request.runtimeSessionId();
        boolean fromSession = continued != null && server.restoresSessionHistory() && !continued.startsWith(PARTIAL);
        ArrayNode history = fromSession ? json.createArrayNode() : history(json, earlier(request));
        String session = continued != null ? continued : (history.isEmpty() ? FULL : PARTIAL) + UUID.randomUUID();
        ObjectNode body = json.createObjectNode();
        int images = input(json, body, request);
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
        if (images > 0) {
            int size = size(json, body);
            if (size > MAX_REQUEST_BYTES) {
                throw new ChatException(ErrorCode.TOO_LARGE, "the message with its " + images + " image(s) makes a "
                        + "request of " + size + " bytes; Hermes' API server reads at most " + MAX_REQUEST_BYTES
                        + " bytes per request (images grow by a third as data URLs)");
            }
        }
        return new Start(body, session, fromSession, history.size(), images);
    }

    private static List<Message> earlier(RunRequest request) {
        try {
            return request.history().messages();
        } catch (ChatException e) {
            throw new ChatException(e.code(), "the conversation so far could not be read: "
                    + (e.getMessage() != null ? e.getMessage() : "no reason given"), e);
        }
    }

    /**
     * Sets {@code input}: the question's text, or with images a one-item array whose content is the text and an
     * {@code image_url} part per image. A file that is not an image (never handed over by an engine, which
     * refuses it) is named in the text.
     *
     * @return how many images it holds
     */
    private static int input(ObjectMapper json, ObjectNode body, RunRequest request) {
        if (request.attachments().isEmpty()) {
            body.put("input", request.userMessage());
            return 0;
        }
        ArrayNode parts = json.createArrayNode();
        StringBuilder text = new StringBuilder(request.userMessage());
        int images = 0;
        for (MessageAttachment file : request.attachments()) {
            if (!IMAGE_TYPES.contains(file.mediaType())) {
                text.append(text.isEmpty() ? "" : "\n").append(mention(file));
                continue;
            }
            byte[] bytes;
            try {
                bytes = request.attachmentContent().readAllBytes(file);
            } catch (ChatException e) {
                throw new ChatException(e.code(), "the image " + file.name() + " could not be read: "
                        + (e.getMessage() != null ? e.getMessage() : "no reason given"), e);
            }
            parts.addObject().put("type", "image_url").putObject("image_url").put("url",
                    "data:" + file.mediaType() + ";base64," + Base64.getEncoder().encodeToString(bytes));
            images++;
        }
        if (!text.isEmpty()) {
            parts.insertObject(0).put("type", "text").put("text", text.toString());
        }
        ArrayNode input = body.putArray("input");
        input.addObject().put("role", "user").set("content", parts);
        return images;
    }

    private static int size(ObjectMapper json, ObjectNode body) {
        try {
            return json.writeValueAsBytes(body).length;
        } catch (JsonProcessingException e) {
            throw new ChatException(ErrorCode.INTERNAL, "cannot write the start request as JSON", e);
        }
    }

    /** How an earlier message's file is named in the text: {@code [image: cat.png]}, {@code [file: report.pdf]}. */
    static String mention(MessageAttachment file) {
        return "[" + (file.isImage() ? "image" : "file") + ": " + file.name() + "]";
    }

    /**
     * The user and assistant messages as {@code {role, content}} entries, oldest first; a user message's files
     * are named after its text, one a line.
     */
    static ArrayNode history(ObjectMapper json, List<Message> messages) {
        ArrayNode entries = json.createArrayNode();
        for (Message message : messages) {
            if (message instanceof UserMessage user) {
                StringBuilder content = new StringBuilder(user.text());
                for (MessageAttachment file : user.attachments()) {
                    content.append(content.isEmpty() ? "" : "\n").append(mention(file));
                }
                entries.addObject().put("role", "user").put("content", content.toString());
            } else if (message instanceof AssistantMessage answer && !answer.text().isBlank()) {
                entries.addObject().put("role", "assistant").put("content", answer.text());
            }
        }
        return entries;
    }
}
