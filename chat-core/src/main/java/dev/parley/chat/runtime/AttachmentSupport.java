package dev.parley.chat.runtime;

import java.util.Locale;
import java.util.Objects;
import java.util.Set;

/**
 * Which attachments a runtime can pass to its model, by media type ({@code image/*} for a family): the engine
 * refuses any other before anything is stored, so an attachment is never silently dropped.
 *
 * @param mediaTypes the media types taken, lower case, {@code family/*} allowed; empty for none
 * @param limitText what the runtime takes, in words for an error message ("images only: Hermes' API server
 *     takes no other files")
 */
public record AttachmentSupport(Set<String> mediaTypes, String limitText) {

    /** A runtime that takes no attachments (the default). */
    public static final AttachmentSupport NONE = new AttachmentSupport(Set.of(), "this runtime takes no attachments");

    public AttachmentSupport {
        mediaTypes = Set.copyOf(Objects.requireNonNull(mediaTypes, "mediaTypes"));
        Objects.requireNonNull(limitText, "limitText");
    }

    /** Takes these types; the limit text lists them. */
    public static AttachmentSupport of(String... mediaTypes) {
        Set<String> types = Set.of(mediaTypes);
        return new AttachmentSupport(types, "this runtime takes " + String.join(", ", types.stream().sorted().toList()));
    }

    /** True if an attachment of this media type (no parameters) can be passed on. */
    public boolean accepts(String mediaType) {
        String type = mediaType.toLowerCase(Locale.ROOT);
        if (mediaTypes.contains(type) || mediaTypes.contains("*/*")) {
            return true;
        }
        int slash = type.indexOf('/');
        return slash > 0 && mediaTypes.contains(type.substring(0, slash) + "/*");
    }
}
