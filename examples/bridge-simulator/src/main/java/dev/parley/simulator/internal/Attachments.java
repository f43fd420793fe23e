package dev.parley.simulator.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.simulator.ReceivedFile;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The attachments addition (protocol section 13) as the simulator plays it: what {@code GET /health} says it takes,
 * and the check of {@code POST /run}'s {@code attachments}, refusing exactly what the reference Bridge
 * ({@code parley_bridge/attachments.py}) refuses, with the same messages. Stateless.
 */
public final class Attachments {
    /** The images a Bridge sends to the model as image parts (informative on {@code /health}). */
    public static final List<String> IMAGE_TYPES = List.of("image/png", "image/jpeg", "image/gif", "image/webp");
    /** The reference Bridge's defaults: any file, 25 MiB and 10 files per message. */
    public static final Limits DEFAULTS = new Limits(List.of("*/*"), 25L * 1024 * 1024, 10);

    private static final int MAX_NAME_BYTES = 255;
    private static final Pattern MEDIA_TYPE =
            Pattern.compile("[a-z0-9][a-z0-9!#$&^_.+-]{0,126}/[a-z0-9][a-z0-9!#$&^_.+-]{0,126}");
    private static final String FORBIDDEN_IN_NAME = "/\\<>:\"|?*";

    /**
     * What a Bridge takes: media types ({@code family/*} and {@code *}{@code /*} allowed), the decoded bytes of one
     * request's files together, and their number.
     */
    public record Limits(List<String> mediaTypes, long maxBytes, int maxFiles) {
        public Limits {
            mediaTypes = List.copyOf(mediaTypes);
        }

        /** True if a file of this (well-formed) type is taken. */
        public boolean accepts(String mediaType) {
            String family = mediaType.substring(0, mediaType.indexOf('/'));
            return mediaTypes.contains(mediaType) || mediaTypes.contains("*/*") || mediaTypes.contains(family + "/*");
        }

        /** What the files may add to a {@code POST /run} body: their Base64, and room for names and types. */
        public long bodyAllowance() {
            return 4 * ((maxBytes + 2) / 3) + maxFiles * 1024L;
        }

        /** Fills the {@code attachments} object of {@code GET /health}. */
        public void describe(ObjectNode health) {
            ObjectNode terms = health.putObject("attachments");
            mediaTypes.forEach(terms.putArray("mediaTypes")::add);
            IMAGE_TYPES.stream().filter(this::accepts).forEach(terms.putArray("imageTypes")::add);
            terms.put("maxBytes", maxBytes).put("maxFiles", maxFiles);
        }
    }

    private Attachments() {
    }

    /**
     * The request's {@code attachments}, checked and decoded (absent or null: none). Throws 400 INVALID_REQUEST
     * naming the first bad file (a bad name, a malformed or refused media type, data that is not padded Base64, a
     * {@code size} that does not match), 413 TOO_LARGE for more files or bytes than {@code limits} take.
     */
    public static List<ReceivedFile> parse(JsonNode value, Limits limits) throws StartRequest.Invalid {
        if (value == null || value.isNull()) {
            return List.of();
        }
        if (!value.isArray()) {
            throw invalid("attachments must be a list");
        }
        if (value.size() > limits.maxFiles()) {
            throw new StartRequest.Invalid(413, "TOO_LARGE", value.size() + " attachments; this Bridge takes at most "
                    + limits.maxFiles() + " per message");
        }
        List<ReceivedFile> files = new ArrayList<>();
        long total = 0;
        for (int index = 0; index < value.size(); index++) {
            JsonNode entry = value.get(index);
            String where = "attachments[" + index + "]";
            if (!entry.isObject()) {
                throw invalid(where + " must be an object with name, mediaType and data");
            }
            String name = checkName(entry.get("name"), where);
            String mediaType = Exchanges.text(entry, "mediaType");
            if (mediaType == null || !MEDIA_TYPE.matcher(mediaType).matches()) {
                throw invalid(where + ".mediaType must be a lower-case media type such as application/pdf");
            }
            if (!limits.accepts(mediaType)) {
                throw invalid(where + " (" + name + ") is " + mediaType + "; this Bridge takes "
                        + String.join(", ", limits.mediaTypes()));
            }
            String data = Exchanges.text(entry, "data");
            if (data == null) {
                throw invalid(where + ".data must be the file's bytes in Base64");
            }
            byte[] content = decode(data, where, name);
            JsonNode size = entry.get("size");
            if (size != null && !size.isNull() && (!size.isNumber() || size.asDouble() != content.length)) {
                throw invalid(where + " (" + name + ") says size " + size + " but its data holds " + content.length
                        + " bytes");
            }
            total += content.length;
            files.add(new ReceivedFile(name, mediaType, content.length, sha256(content)));
        }
        if (total > limits.maxBytes()) {
            throw new StartRequest.Invalid(413, "TOO_LARGE", "the attachments hold more than " + limits.maxBytes()
                    + " bytes, this Bridge's limit per message");
        }
        return List.copyOf(files);
    }

    /**
     * A name safe to create in a working directory as it is, or 400: refused, never repaired, for a path
     * ({@code /}, {@code \}), a control or format character, one of {@code <>:"|?*}, a leading or trailing dot or
     * space, a name that is not NFC-normalised or longer than 255 bytes of UTF-8.
     */
    static String checkName(JsonNode value, String where) throws StartRequest.Invalid {
        if (value == null || !value.isTextual() || value.asText().isEmpty()) {
            throw invalid(where + ".name must be a non-blank string");
        }
        String name = value.asText();
        String shown = shown(name);
        boolean forbidden = name.codePoints().anyMatch(c -> FORBIDDEN_IN_NAME.indexOf(c) >= 0
                || Character.getType(c) == Character.CONTROL || Character.getType(c) == Character.FORMAT
                || Character.getType(c) == Character.SURROGATE);
        if (forbidden) {
            throw invalid(where + ".name '" + shown + "' holds a path separator, a control character or one of <>:\"|?*");
        }
        char first = name.charAt(0);
        char last = name.charAt(name.length() - 1);
        if (first == '.' || first == ' ' || last == '.' || last == ' ' || !name.strip().equals(name)) {
            throw invalid(where + ".name '" + shown + "' starts or ends with a dot or a space");
        }
        if (!Normalizer.isNormalized(name, Normalizer.Form.NFC)
                || name.getBytes(StandardCharsets.UTF_8).length > MAX_NAME_BYTES) {
            throw invalid(where + ".name '" + shown + "' is not NFC-normalised or longer than " + MAX_NAME_BYTES + " bytes");
        }
        return name;
    }

    /** Padded Base64 without line breaks (RFC 4648), or 400. */
    private static byte[] decode(String data, String where, String name) throws StartRequest.Invalid {
        try {
            if (data.length() % 4 == 0) {
                return Base64.getDecoder().decode(data);
            }
        } catch (IllegalArgumentException notBase64) {
            // answered below
        }
        throw invalid(where + ".data (" + name + ") is not valid Base64");
    }

    /** At most 80 characters of a refused name, its backslashes and invisible characters escaped. */
    private static String shown(String name) {
        StringBuilder shown = new StringBuilder();
        name.substring(0, Math.min(80, name.length())).chars().forEach(c -> {
            if (c == '\\') {
                shown.append("\\\\");
            } else if (Character.isISOControl(c) || Character.getType(c) == Character.FORMAT
                    || Character.getType(c) == Character.SURROGATE) {
                shown.append(String.format("\\u%04x", c));
            } else {
                shown.append((char) c);
            }
        });
        return shown.toString();
    }

    private static String sha256(byte[] content) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }

    private static StartRequest.Invalid invalid(String message) {
        return new StartRequest.Invalid(400, "INVALID_REQUEST", message);
    }
}
