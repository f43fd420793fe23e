package dev.parley.chat.attachment;

import dev.parley.chat.ChatException;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Set;

/**
 * Bounds on what people may attach. Build with {@link #builder()}; {@link #defaults()} are:
 * <ul>
 *   <li>{@code maxFileBytes} 20 MiB (CopilotKit's own default per file);</li>
 *   <li>{@code maxFilesPerMessage} 10 and {@code maxBytesPerMessage} 50 MiB;</li>
 *   <li>{@code maxBytesPerOwner} 1 GiB, counting an owner's equal files once (an upload is checked as if its
 *       bytes were new: it must fit in what is left);</li>
 *   <li>{@code allowedTypes}: PNG, JPEG, GIF and WebP images, PDF, plain text, Markdown, CSV, JSON, MP3, WAV,
 *       OGG and WebM audio, MP4 and WebM video. HTML and SVG are not allowed by default (a host that allows
 *       them gets them served as downloads, never shown inline).</li>
 * </ul>
 * A type may be given as {@code image/*} for a whole family. Immutable.
 */
public record AttachmentLimits(
        long maxFileBytes,
        int maxFilesPerMessage,
        long maxBytesPerMessage,
        long maxBytesPerOwner,
        Set<String> allowedTypes) {

    private static final long MIB = 1024L * 1024L;

    /** The allowed types of {@link #defaults()}. */
    public static final Set<String> DEFAULT_TYPES = Set.of("image/png", "image/jpeg", "image/gif", "image/webp",
            "application/pdf", "text/plain", "text/markdown", "text/csv", "application/json", "audio/mpeg",
            "audio/wav", "audio/ogg", "audio/webm", "video/mp4", "video/webm");

    public AttachmentLimits {
        positive(maxFileBytes, "maxFileBytes");
        positive(maxFilesPerMessage, "maxFilesPerMessage");
        positive(maxBytesPerMessage, "maxBytesPerMessage");
        positive(maxBytesPerOwner, "maxBytesPerOwner");
        if (allowedTypes == null || allowedTypes.isEmpty()) {
            throw ChatException.configuration("allowedTypes must name at least one media type");
        }
        Set<String> types = new LinkedHashSet<>();
        for (String type : allowedTypes) {
            String normal = type == null ? "" : type.strip().toLowerCase(Locale.ROOT);
            if (!normal.matches("[a-z0-9.+-]+/([a-z0-9.+-]+|\\*)")) {
                throw ChatException.configuration("allowedTypes holds '" + type + "', which is not a media type"
                        + " such as image/png or image/*");
            }
            types.add(normal);
        }
        allowedTypes = Set.copyOf(types);
    }

    public static AttachmentLimits defaults() {
        return builder().build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** True if a file of this media type (no parameters, lower case) may be attached. */
    public boolean allows(String mediaType) {
        if (allowedTypes.contains(mediaType)) {
            return true;
        }
        int slash = mediaType.indexOf('/');
        return slash > 0 && allowedTypes.contains(mediaType.substring(0, slash) + "/*");
    }

    private static void positive(long value, String name) {
        if (value <= 0) {
            throw ChatException.configuration(name + " must be positive, got " + value);
        }
    }

    /** Builds {@link AttachmentLimits}; starts from the defaults. Not thread-safe. */
    public static final class Builder {
        private long maxFileBytes = 20 * MIB;
        private int maxFilesPerMessage = 10;
        private long maxBytesPerMessage = 50 * MIB;
        private long maxBytesPerOwner = 1024 * MIB;
        private Set<String> allowedTypes = DEFAULT_TYPES;

        private Builder() {
        }

        public Builder maxFileBytes(long value) {
            this.maxFileBytes = value;
            return this;
        }

        public Builder maxFilesPerMessage(int value) {
            this.maxFilesPerMessage = value;
            return this;
        }

        public Builder maxBytesPerMessage(long value) {
            this.maxBytesPerMessage = value;
            return this;
        }

        public Builder maxBytesPerOwner(long value) {
            this.maxBytesPerOwner = value;
            return this;
        }

        /** Replaces the allowed types (e.g. {@code Set.of("image/*", "application/pdf")}). */
        public Builder allowedTypes(Set<String> value) {
            this.allowedTypes = value;
            return this;
        }

        /** @throws ChatException CONFIGURATION for a limit that is not positive or a malformed type */
        public AttachmentLimits build() {
            return new AttachmentLimits(maxFileBytes, maxFilesPerMessage, maxBytesPerMessage, maxBytesPerOwner,
                    allowedTypes);
        }
    }
}
