package dev.parley.chat.hermes.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.RunRequest;
import java.nio.charset.StandardCharsets;
import java.text.Normalizer;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * The Bridge's attachments addition ({@code docs/hermes-bridge-protocol.md} section 13): the question's files as
 * the {@code attachments} field of {@code POST /run}, {@code [{"name","mediaType","size","data"}]} with the bytes in
 * Base64. They are sent only to a Bridge whose {@code GET /health} lists the capability and takes each file's type,
 * their number and their bytes; anything else fails the run before {@code POST /run} with a message naming the
 * limit, so that no file is ever dropped (a Bridge without the addition would ignore the field). A name the
 * Bridge would refuse (it never repairs one) is sent repaired ({@link #bridgeName}).
 */
public final class BridgeAttachments {
    /** What {@code GET /health} lists in {@code capabilities} for this addition. */
    public static final String CAPABILITY = "attachments";
    /** Characters a Bridge refuses in a file name (besides control and format characters). */
    private static final String FORBIDDEN_IN_NAME = "/\\<>:\"|?*";
    private static final int MAX_NAME_BYTES = 255;

    /** What a Bridge says on {@code GET /health} it takes; {@code mediaTypes} may hold {@code family/*}. */
    public record Offer(Set<String> mediaTypes, long maxBytes, int maxFiles) {
        public Offer {
            mediaTypes = Set.copyOf(mediaTypes);
        }

        /** True if this Bridge takes a file of the type. */
        public boolean accepts(String mediaType) {
            return new AttachmentSupport(mediaTypes, "").accepts(mediaType);
        }

        /** In words for a log or health line: {@code image/*, text/plain; at most 10 files, 26214400 bytes}. */
        public String describe() {
            return String.join(", ", mediaTypes.stream().sorted().toList()) + "; at most " + maxFiles + " files, "
                    + maxBytes + " bytes per message";
        }
    }

    private final HermesHttp http;

    public BridgeAttachments(HermesHttp http) {
        this.http = http;
    }

    /**
     * What the Bridge's {@code GET /health} answer says it takes; null if it does not list the capability (an
     * older Bridge, or one whose operator turned files off).
     */
    public static @Nullable Offer offer(JsonNode health) {
        boolean listed = false;
        for (JsonNode capability : health.path("capabilities")) {
            listed |= CAPABILITY.equals(capability.asText());
        }
        JsonNode terms = health.path(CAPABILITY);
        if (!listed || !terms.isObject()) {
            return null;
        }
        Set<String> types = new LinkedHashSet<>();
        terms.path("mediaTypes").forEach(type -> types.add(type.asText()));
        return new Offer(types, terms.path("maxBytes").asLong(0), terms.path("maxFiles").asInt(0));
    }

    /**
     * The {@code attachments} field for the run's question: its files read through
     * {@link RunRequest#attachmentContent()} once the Bridge's {@code GET /health} showed it takes them.
     *
     * @return null for a question without files
     * @throws ChatException UNSUPPORTED if the Bridge does not take attachments, INVALID_INPUT for a type it does
     *     not take, TOO_LARGE past its number or bytes per message, RUNTIME_UNAVAILABLE if its health cannot be
     *     read, as reading a file fails (NOT_FOUND, STORE_FAILURE)
     */
    public @Nullable ArrayNode field(RunRequest request) {
        List<MessageAttachment> files = request.attachments();
        if (files.isEmpty()) {
            return null;
        }
        Offer offer = read(files);
        if (files.size() > offer.maxFiles()) {
            throw new ChatException(ErrorCode.TOO_LARGE, "the message has " + files.size() + " files; the Hermes Bridge"
                    + " at " + http.where() + " takes at most " + offer.maxFiles() + " per message");
        }
        for (MessageAttachment file : files) {
            if (!offer.accepts(file.mediaType())) {
                throw ChatException.invalidInput("the Hermes Bridge at " + http.where() + " does not take " + file.name()
                        + " (" + file.mediaType() + "); it takes " + String.join(", ", offer.mediaTypes().stream()
                        .sorted().toList()));
            }
        }
        long total = files.stream().mapToLong(MessageAttachment::size).sum();
        if (total > offer.maxBytes()) {
            throw new ChatException(ErrorCode.TOO_LARGE, "the message's files hold " + total + " bytes; the Hermes Bridge"
                    + " at " + http.where() + " takes at most " + offer.maxBytes() + " bytes per message");
        }
        ArrayNode field = http.json().createArrayNode();
        for (MessageAttachment file : files) {
            byte[] bytes;
            try {
                bytes = request.attachmentContent().readAllBytes(file);
            } catch (ChatException e) {
                throw new ChatException(e.code(), "the file " + file.name() + " could not be read: "
                        + (e.getMessage() != null ? e.getMessage() : "no reason given"), e);
            }
            field.addObject().put("name", bridgeName(file.name())).put("mediaType", file.mediaType())
                    .put("size", bytes.length)
                    .put("data", Base64.getEncoder().encodeToString(bytes));
        }
        return field;
    }

    private Offer read(List<MessageAttachment> files) {
        HermesHttp.Probe health = http.probe(http.request(http.url("health")).get().build());
        if (health == null || health.status() != 200) {
            throw new ChatException(ErrorCode.RUNTIME_UNAVAILABLE, "cannot check that the Hermes Bridge at "
                    + http.where() + " takes attachments: GET /health "
                    + (health == null ? "did not answer" : "answered HTTP " + health.status()));
        }
        Offer offer = offer(health.json());
        if (offer == null) {
            throw new ChatException(ErrorCode.UNSUPPORTED, "the Hermes Bridge at " + http.where() + " takes no "
                    + "attachments (GET /health lists no '" + CAPABILITY + "'), so the message's files ("
                    + files.stream().map(MessageAttachment::name).collect(Collectors.joining(", ")) + ") were not sent; "
                    + "upgrade the Bridge, or set HermesConfig.bridgeAttachments(AttachmentSupport.NONE) so that files"
                    + " are refused when they are uploaded");
        }
        return offer;
    }

    /**
     * The file's name as the Bridge takes it (protocol section 13 refuses the others rather than repair them): NFC;
     * a path separator, control or format character, or one of {@code <>:"|?*} becomes {@code _}, as does a
     * leading or trailing dot or space (no hidden file, no {@code ..}); cut to 255 bytes of UTF-8, the extension
     * kept. A name Parley keeps, such as {@code .env} or {@code notes:v2.txt}, would otherwise fail the run.
     */
    static String bridgeName(String name) {
        String nfc = Normalizer.normalize(name, Normalizer.Form.NFC);
        StringBuilder safe = new StringBuilder(nfc.length());
        nfc.codePoints().forEach(c -> {
            int type = Character.getType(c);
            boolean refused = FORBIDDEN_IN_NAME.indexOf(c) >= 0 || type == Character.CONTROL || type == Character.FORMAT;
            safe.appendCodePoint(refused ? '_' : c);
        });
        String repaired = safe.isEmpty() ? "file" : safe.toString();
        if (repaired.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
            repaired = cut(repaired);
        }
        return withoutEdgeDotsOrSpaces(repaired);
    }

    /** The name cut to {@value #MAX_NAME_BYTES} bytes of UTF-8 between whole characters, a short extension kept. */
    private static String cut(String name) {
        int dot = name.lastIndexOf('.');
        String extension = dot > 0 && name.length() - dot <= 16 ? name.substring(dot) : "";
        String base = name.substring(0, name.length() - extension.length());
        int room = MAX_NAME_BYTES - extension.getBytes(StandardCharsets.UTF_8).length;
        StringBuilder cut = new StringBuilder();
        int used = 0;
        for (int i = 0; i < base.length(); i += Character.charCount(base.codePointAt(i))) {
            int bytes = new String(Character.toChars(base.codePointAt(i))).getBytes(StandardCharsets.UTF_8).length;
            if (used + bytes > room) {
                break;
            }
            cut.appendCodePoint(base.codePointAt(i));
            used += bytes;
        }
        return cut + extension;
    }

    /** Leading and trailing dots and spaces (any Unicode space) made {@code _}. */
    private static String withoutEdgeDotsOrSpaces(String name) {
        StringBuilder edges = new StringBuilder(name);
        for (int i = 0; i < edges.length() && dotOrSpace(edges.charAt(i)); i++) {
            edges.setCharAt(i, '_');
        }
        for (int i = edges.length() - 1; i >= 0 && dotOrSpace(edges.charAt(i)); i--) {
            edges.setCharAt(i, '_');
        }
        return edges.toString();
    }

    private static boolean dotOrSpace(char c) {
        return c == '.' || Character.isWhitespace(c) || Character.isSpaceChar(c);
    }
}
