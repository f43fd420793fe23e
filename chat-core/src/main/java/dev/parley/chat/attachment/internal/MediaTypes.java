package dev.parley.chat.attachment.internal;

import dev.parley.chat.ChatException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Tells a file's media type from its first bytes, and checks it against the type its sender claimed: the
 * sender's word is never trusted over the content. Knows the signatures of the common image, audio, video,
 * PDF and ZIP formats, and tells text (UTF-8 without NUL bytes) from binary, HTML and SVG from other text.
 */
public final class MediaTypes {
    /** How many leading bytes {@link #sniff} looks at. */
    public static final int HEAD_BYTES = 4096;

    public static final String OCTET_STREAM = "application/octet-stream";
    private static final String TEXT = "text/plain";
    private static final String ZIP = "application/zip";

    /** Other names of a type, as browsers and tools label files. */
    private static final Map<String, String> ALIASES = Map.of("image/jpg", "image/jpeg", "image/pjpeg", "image/jpeg",
            "audio/x-wav", "audio/wav", "audio/wave", "audio/wav", "audio/mp3", "audio/mpeg", "audio/x-mpeg",
            "audio/mpeg", "application/x-zip-compressed", ZIP, "text/x-markdown", "text/markdown");

    /** Types a claim may name for text content. */
    private static final Set<String> TEXT_TYPES = Set.of(TEXT, "text/markdown", "text/csv", "application/json",
            "text/tab-separated-values", "application/x-ndjson", "text/x-java-source", "text/x-python",
            "application/xml", "text/xml", "application/yaml", "text/yaml", "text/calendar");

    /** Text types by file extension, for text sent without a claimed type. */
    private static final Map<String, String> TEXT_BY_EXTENSION = Map.of("md", "text/markdown", "markdown",
            "text/markdown", "csv", "text/csv", "json", "application/json", "tsv", "text/tab-separated-values");

    private MediaTypes() {
    }

    /**
     * The type the content shows: a known signature's type, {@code text/html}, {@code image/svg+xml} or
     * {@code text/plain} for UTF-8 text, else {@value #OCTET_STREAM}.
     *
     * @param head the content's first bytes (up to {@link #HEAD_BYTES}); {@code length} of them are valid
     * @param complete the head is the whole content (a multi-byte character may then not be cut at its end)
     */
    public static String sniff(byte[] head, int length, boolean complete) {
        if (starts(head, length, 0, 0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A)) {
            return "image/png";
        }
        if (starts(head, length, 0, 0xFF, 0xD8, 0xFF)) {
            return "image/jpeg";
        }
        if (starts(head, length, 0, 'G', 'I', 'F', '8')) {
            return "image/gif";
        }
        if (starts(head, length, 0, 'R', 'I', 'F', 'F') && starts(head, length, 8, 'W', 'E', 'B', 'P')) {
            return "image/webp";
        }
        if (starts(head, length, 0, 'R', 'I', 'F', 'F') && starts(head, length, 8, 'W', 'A', 'V', 'E')) {
            return "audio/wav";
        }
        if (starts(head, length, 0, '%', 'P', 'D', 'F', '-')) {
            return "application/pdf";
        }
        if (starts(head, length, 0, 'O', 'g', 'g', 'S')) {
            return "audio/ogg";
        }
        if (starts(head, length, 0, 0x1A, 0x45, 0xDF, 0xA3)) {
            return "video/webm";
        }
        if (starts(head, length, 4, 'f', 't', 'y', 'p')) {
            return "video/mp4";
        }
        if (starts(head, length, 0, 'I', 'D', '3') || length >= 2 && (head[0] & 0xFF) == 0xFF
                && (head[1] & 0xE0) == 0xE0) {
            return "audio/mpeg";
        }
        if (starts(head, length, 0, 'P', 'K', 3, 4) || starts(head, length, 0, 'P', 'K', 5, 6)) {
            return ZIP;
        }
        String text = utf8(head, length, complete);
        if (text == null) {
            return OCTET_STREAM;
        }
        String start = text.stripLeading().toLowerCase(Locale.ROOT);
        if (start.startsWith("<svg") || start.startsWith("<?xml") && start.contains("<svg")) {
            return "image/svg+xml";
        }
        if (start.startsWith("<!doctype html") || start.startsWith("<html") || start.startsWith("<head")
                || start.startsWith("<body") || start.startsWith("<script") || start.startsWith("<iframe")) {
            return "text/html";
        }
        return TEXT;
    }

    /**
     * The type an attachment gets: what the content shows, named as its sender named it where the two agree.
     * Text keeps a claimed text type (Markdown, CSV, JSON…), or one from the file's extension; a ZIP keeps a
     * claimed ZIP-based type (an Office document); an unknown binary keeps a claimed type no signature
     * covers. HTML and SVG are always called so, whatever was claimed.
     *
     * @param claimed the sender's type, null or blank for none; parameters ({@code ;charset=…}) are ignored
     * @throws ChatException INVALID_INPUT if the claim contradicts the content (a PDF sent as image/png)
     */
    public static String resolve(@Nullable String claimed, String name, String sniffed) {
        String claim = normalise(claimed);
        if (sniffed.equals("text/html") || sniffed.equals("image/svg+xml")) {
            return sniffed;
        }
        if (claim == null) {
            return sniffed.equals(TEXT) ? TEXT_BY_EXTENSION.getOrDefault(FileNames.extension(name), TEXT) : sniffed;
        }
        if (claim.equals(sniffed) || sameFamily(claim, sniffed)) {
            return claim;
        }
        if (sniffed.equals(TEXT) && (TEXT_TYPES.contains(claim) || claim.startsWith("text/")
                && !claim.equals("text/html"))) {
            return claim;
        }
        if (sniffed.equals(ZIP) && claim.startsWith("application/") && (claim.contains("openxmlformats")
                || claim.contains("opendocument") || claim.endsWith("+zip") || claim.equals("application/epub+zip"))) {
            return claim;
        }
        if (sniffed.equals(OCTET_STREAM) && !hasSignature(claim) && !TEXT_TYPES.contains(claim)
                && !claim.startsWith("text/") && !claim.startsWith("image/")) {
            return claim;
        }
        throw ChatException.invalidInput("the file '" + name + "' was sent as " + claim + " but its content is "
                + describe(sniffed));
    }

    /** The type without parameters, lower case, aliases resolved; null for none or octet-stream. */
    public static @Nullable String normalise(@Nullable String type) {
        if (type == null) {
            return null;
        }
        int semicolon = type.indexOf(';');
        String bare = (semicolon < 0 ? type : type.substring(0, semicolon)).strip().toLowerCase(Locale.ROOT);
        if (bare.isEmpty() || bare.equals(OCTET_STREAM) || bare.equals("binary/octet-stream")) {
            return null;
        }
        return ALIASES.getOrDefault(bare, bare);
    }

    /** Containers whose audio and video flavours share one signature. */
    private static boolean sameFamily(String claim, String sniffed) {
        return sniffed.equals("video/webm") && claim.equals("audio/webm")
                || sniffed.equals("video/mp4") && (claim.equals("audio/mp4") || claim.equals("audio/m4a")
                        || claim.equals("audio/x-m4a") || claim.equals("video/quicktime"))
                || sniffed.equals("audio/ogg") && (claim.equals("video/ogg") || claim.equals("application/ogg"));
    }

    private static boolean hasSignature(String type) {
        return Set.of("image/png", "image/jpeg", "image/gif", "image/webp", "audio/wav", "application/pdf",
                "audio/ogg", "video/webm", "audio/webm", "video/mp4", "audio/mp4", "audio/mpeg", ZIP).contains(type);
    }

    private static String describe(String sniffed) {
        return switch (sniffed) {
            case OCTET_STREAM -> "not of that type";
            case TEXT -> "text";
            default -> sniffed;
        };
    }

    private static boolean starts(byte[] head, int length, int at, int... signature) {
        if (length < at + signature.length) {
            return false;
        }
        for (int i = 0; i < signature.length; i++) {
            if ((head[at + i] & 0xFF) != signature[i]) {
                return false;
            }
        }
        return true;
    }

    /** The head as text if it is UTF-8 without NUL bytes (a character cut at the end of a partial head is fine). */
    private static @Nullable String utf8(byte[] head, int length, boolean complete) {
        int end = length;
        if (!complete) {
            int back = 0;
            while (back < 3 && end - back - 1 >= 0 && (head[end - back - 1] & 0xC0) == 0x80) {
                back++;
            }
            if (end - back - 1 >= 0 && (head[end - back - 1] & 0xC0) == 0xC0) {
                end = end - back - 1;
            }
        }
        for (int i = 0; i < end; i++) {
            if (head[i] == 0) {
                return null;
            }
        }
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(ByteBuffer.wrap(head, 0, end)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
