package dev.parley.chat.attachment;

import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * What the chat store keeps of attachments: one row per upload, and for each blob how many rows use it, so that
 * an owner's uploads with equal bytes share one blob and a blob is freed with the last row that uses it. A
 * {@link dev.parley.chat.store.ChatStore} that keeps attachments implements this too; its
 * {@code deleteThread} removes the thread's attachments with the thread and lists the blobs no row uses any
 * more among the {@link #unreferencedBlobs unreferenced} ones, in the same transaction.
 *
 * <p>Thread-safe. Methods throw {@link dev.parley.chat.ChatException}: STORE_FAILURE when the store fails.
 */
public interface AttachmentStore {

    /**
     * Records an attachment whose bytes were just stored under {@link Attachment#blobKey()}. If the owner has a
     * blob with the same SHA-256 that is still in use, the attachment uses that one instead, and the returned
     * attachment names it: the caller then deletes the blob it stored. Atomic with respect to
     * {@code deleteThread}: a blob that a deletion frees is never reused.
     *
     * @return the attachment as stored (its blob key may differ from the given one)
     * @throws dev.parley.chat.ChatException NOT_FOUND if the thread does not exist (any more); CONFLICT if the id
     *     exists. Either way nothing is recorded and no blob gains a use.
     */
    Attachment saveAttachment(Attachment attachment);

    Optional<Attachment> findAttachment(String attachmentId);

    /** The attachments with these ids that exist, in no particular order. */
    List<Attachment> findAttachments(Collection<String> attachmentIds);

    /** The bytes an owner's attachments take, each shared blob counted once. */
    long storedAttachmentBytes(String ownerId);

    /**
     * Keys of blobs no attachment uses any more (their threads were deleted), oldest first, up to {@code limit}:
     * the caller deletes them from the {@link BlobStore} and then calls {@link #forgetBlobs}.
     */
    List<String> unreferencedBlobs(int limit);

    /** Forgets unreferenced blobs whose bytes were deleted; keys not listed are ignored. */
    void forgetBlobs(Collection<String> blobKeys);
}
