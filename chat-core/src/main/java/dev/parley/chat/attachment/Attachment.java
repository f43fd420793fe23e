package dev.parley.chat.attachment;

import dev.parley.chat.model.MessageAttachment;
import java.time.Instant;
import java.util.Objects;

/**
 * An uploaded file as the store keeps it.
 *
 * @param id its id (a random UUID)
 * @param ownerId the owner who uploaded it; nobody else sees it
 * @param threadId the thread it was uploaded to; deleting the thread deletes it
 * @param name the sanitised file name
 * @param mediaType the media type read from the content
 * @param size the length in bytes
 * @param sha256 the SHA-256 of the bytes, lowercase hex: an owner's uploads with equal bytes share one blob
 * @param blobKey where {@link BlobStore} keeps the bytes
 * @param createdAt when it was uploaded
 */
public record Attachment(
        String id,
        String ownerId,
        String threadId,
        String name,
        String mediaType,
        long size,
        String sha256,
        String blobKey,
        Instant createdAt) {

    public Attachment {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(ownerId, "ownerId");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(mediaType, "mediaType");
        Objects.requireNonNull(sha256, "sha256");
        Objects.requireNonNull(blobKey, "blobKey");
        Objects.requireNonNull(createdAt, "createdAt");
    }

    /** The same attachment with its bytes kept under another key. */
    public Attachment withBlobKey(String key) {
        return new Attachment(id, ownerId, threadId, name, mediaType, size, sha256, key, createdAt);
    }

    /** How a message lists it. */
    public MessageAttachment toMessageAttachment() {
        return new MessageAttachment(id, name, mediaType, size);
    }
}
