package dev.parley.chat.spring.internal.agui;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.model.UserMessage;
import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * AG-UI's file parts of a user message, both ways: read from an input (1.0's {@code image}, {@code audio},
 * {@code video}, {@code document} parts with a {@code data} source, and 0.0.59's {@code binary} part with
 * {@code data}), uploaded as attachments of the new message; and written into a snapshot's user message as
 * parts whose {@code url} source is the attachment's download address. URL and provider-file sources are
 * read but not fetched: Parley does not download from addresses a client names (that would let a client
 * make the server call any address), so a new message carrying one is refused.
 */
final class AgUiParts {
    private static final Set<String> FILE_TYPES = Set.of("image", "audio", "video", "document", "binary");
    private static final Pattern BASE64 = Pattern.compile("[A-Za-z0-9+/=\\s]*");
    /** A data URL's head, which some clients put before the base64: {@code data:image/png;base64,}. */
    private static final Pattern DATA_URL = Pattern.compile("data:([^;,]*)(;[^;,]*)*;base64,");

    /**
     * One file part: its AG-UI part type, its source type ({@code data}, {@code url}, {@code file}), the source's
     * value (base64 for data), its media type and file name where given.
     */
    record FilePart(String partType, String sourceType, String value, @Nullable String mimeType,
            @Nullable String filename) {
    }

    private AgUiParts() {
    }

    static boolean isFile(String partType) {
        return FILE_TYPES.contains(partType);
    }

    /**
     * Reads a file part of message {@code messageId}.
     *
     * @throws ChatException INVALID_INPUT for a part without a source (or, for binary, without data, url or id)
     */
    static FilePart file(JsonNode part, String messageId) {
        FilePart read = readFile(part, messageId);
        java.util.regex.Matcher dataUrl = DATA_URL.matcher(read.value());
        if (read.sourceType().equals("data") && dataUrl.lookingAt()) {
            return new FilePart(read.partType(), "data", read.value().substring(dataUrl.end()),
                    read.mimeType() != null ? read.mimeType() : dataUrl.group(1), read.filename());
        }
        return read;
    }

    private static FilePart readFile(JsonNode part, String messageId) {
        String type = part.path("type").asText();
        if (type.equals("binary")) {
            String mime = text(part, "mimeType");
            String filename = text(part, "filename");
            for (String field : List.of("data", "url", "id")) {
                String value = text(part, field);
                if (value != null) {
                    return new FilePart(type, field.equals("id") ? "file" : field, value, mime, filename);
                }
            }
            throw ChatException.invalidInput("the binary part of message " + messageId + " has no data, url or id");
        }
        JsonNode source = part.get("source");
        String sourceType = source == null ? null : text(source, "type");
        String value = source == null ? null : text(source, "value");
        if (sourceType == null || value == null) {
            throw ChatException.invalidInput("the " + type + " part of message " + messageId
                    + " has no source {type, value}");
        }
        return new FilePart(type, sourceType, value, text(source, "mimeType"), text(part.path("metadata"), "filename"));
    }

    /**
     * Uploads a new message's file parts to the thread; their attachment ids, in order.
     *
     * @throws ChatException INVALID_INPUT for a source that is not inline data or is not base64, and as
     *     {@link dev.parley.chat.engine.ChatAttachments#upload} says
     */
    static List<String> upload(ChatEngine engine, String ownerId, String threadId, List<FilePart> files) {
        for (FilePart file : files) {
            if (!file.sourceType().equals("data")) {
                throw ChatException.invalidInput("a " + file.partType() + " part with a " + file.sourceType()
                        + " source: Parley takes files inline (source type \"data\", base64) and fetches no"
                        + " addresses; upload the file to POST …/sessions/{id}/attachments instead");
            }
            if (!BASE64.matcher(file.value()).matches()) {
                throw ChatException.invalidInput("a " + file.partType() + " part's data is not base64");
            }
        }
        List<String> ids = new ArrayList<>(files.size());
        for (FilePart file : files) {
            InputStream bytes = Base64.getMimeDecoder()
                    .wrap(new ByteArrayInputStream(file.value().getBytes(StandardCharsets.US_ASCII)));
            ids.add(engine.attachments().upload(ownerId, threadId, file.filename(), file.mimeType(), bytes).id());
        }
        return ids;
    }

    /**
     * A stored user message's AG-UI content: its text alone when it has no attachments, else parts — the text
     * (when not blank) and a part per attachment whose {@code url} source is {@code downloadPath + id}.
     */
    static JsonNode content(UserMessage message, String downloadPath) {
        if (message.attachments().isEmpty()) {
            return JsonNodeFactory.instance.textNode(message.text());
        }
        ArrayNode parts = JsonNodeFactory.instance.arrayNode();
        if (!message.text().isBlank()) {
            parts.addObject().put("type", "text").put("text", message.text());
        }
        for (MessageAttachment file : message.attachments()) {
            ObjectNode part = parts.addObject().put("type", partType(file.mediaType()));
            part.putObject("source").put("type", "url").put("value", downloadPath + file.id())
                    .put("mimeType", file.mediaType());
            part.putObject("metadata").put("filename", file.name()).put("size", file.size());
        }
        return parts;
    }

    /** The part type CopilotKit picks for a media type: image, audio, video, else document. */
    static String partType(String mediaType) {
        for (String family : List.of("image", "audio", "video")) {
            if (mediaType.startsWith(family + "/")) {
                return family;
            }
        }
        return "document";
    }

    private static @Nullable String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value != null && value.isTextual() ? value.asText() : null;
    }
}
