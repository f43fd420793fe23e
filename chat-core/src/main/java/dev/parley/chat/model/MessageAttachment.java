package dev.parley.chat.model;

import java.util.Objects;

/**
 * A file or image a person sent with a message, as the message lists it: what a client needs to show it and
 * to fetch its bytes ({@code GET …/attachments/{id}}), nothing of where they are kept.
 *
 * @param id the attachment's id
 * @param name its file name, sanitised (no path, no control characters)
 * @param mediaType its media type as read from its content (not as the sender claimed it)
 * @param size its length in bytes
 */
public record MessageAttachment(String id, String name, String mediaType, long size) {

    public MessageAttachment {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(mediaType, "mediaType");
        if (size < 0) {
            throw new IllegalArgumentException("size must not be negative, got " + size);
        }
    }

    /** True for images ({@code image/…}). */
    public boolean isImage() {
        return mediaType.startsWith("image/");
    }
}
