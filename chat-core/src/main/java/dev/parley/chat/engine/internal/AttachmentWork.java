package dev.parley.chat.engine.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.attachment.Attachment;
import dev.parley.chat.attachment.AttachmentLimits;
import dev.parley.chat.attachment.AttachmentStore;
import dev.parley.chat.attachment.BlobStore;
import dev.parley.chat.attachment.internal.BoundedDigestStream;
import dev.parley.chat.attachment.internal.FileNames;
import dev.parley.chat.attachment.internal.MediaTypes;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.runtime.AttachmentContent;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.store.ChatStore;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.SequenceInputStream;
import java.io.UncheckedIOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Uploads, checks and reads attachments for the engine: the content decides the media type, limits are
 * enforced while the bytes stream in (nothing is kept of a refused upload), an owner's equal files share one
 * blob, and blobs freed by deleted threads are deleted from the {@link BlobStore}. Thread-safe.
 */
public final class AttachmentWork {
    private static final Logger log = LoggerFactory.getLogger(AttachmentWork.class);
    private static final int PURGE_PAGE = 200;

    private final ChatStore chatStore;
    private final @Nullable AttachmentStore store;
    private final @Nullable BlobStore blobs;
    private final AttachmentLimits limits;
    private final AttachmentSupport support;
    private final Clock clock;

    /** @param store null (or {@code blobs} null) when the host keeps no attachments: uploads are UNSUPPORTED */
    public AttachmentWork(ChatStore chatStore, @Nullable AttachmentStore store, @Nullable BlobStore blobs,
            AttachmentLimits limits, AttachmentSupport support, Clock clock) {
        this.chatStore = chatStore;
        this.store = blobs == null ? null : store;
        this.blobs = store == null ? null : blobs;
        this.limits = limits;
        this.support = support;
        this.clock = clock;
    }

    public AttachmentLimits limits() {
        return limits;
    }

    /** What the runtime takes. */
    public AttachmentSupport support() {
        return support;
    }

    /** True if this engine keeps attachments at all. */
    public boolean enabled() {
        return store != null;
    }

    /**
     * Stores an upload to an owner's thread, reading {@code content} to its end (the caller closes it).
     *
     * @throws ChatException NOT_FOUND for an unknown or another owner's thread; INVALID_INPUT for an empty
     *     file, content that contradicts its claimed type, a type the host does not allow or the runtime cannot
     *     take, an upload cut off; TOO_LARGE past the file's or the owner's limit; UNSUPPORTED if the host keeps
     *     no attachments
     */
    public Attachment upload(String ownerId, String threadId, @Nullable String name, @Nullable String claimedType,
            InputStream content) {
        AttachmentStore meta = requireEnabled();
        Objects.requireNonNull(content, "content");
        ownedThread(ownerId, threadId);
        String safeName = FileNames.sanitise(name);
        byte[] head;
        try {
            head = content.readNBytes(MediaTypes.HEAD_BYTES);
        } catch (IOException e) {
            throw cutOff(e);
        }
        if (head.length == 0) {
            throw ChatException.invalidInput("the file '" + safeName + "' is empty");
        }
        String type = MediaTypes.resolve(claimedType, safeName,
                MediaTypes.sniff(head, head.length, head.length < MediaTypes.HEAD_BYTES));
        checkType(safeName, type);
        long room = limits.maxBytesPerOwner() - meta.storedAttachmentBytes(ownerId);
        long max = Math.min(limits.maxFileBytes(), room);
        String limitText = max == limits.maxFileBytes() ? limits.maxFileBytes() + " bytes per file"
                : "the " + Math.max(room, 0) + " bytes left of the owner's " + limits.maxBytesPerOwner() + " bytes";
        if (max < head.length) {
            throw new ChatException(ErrorCode.TOO_LARGE, "the attachment is larger than " + limitText);
        }
        BoundedDigestStream bounded = new BoundedDigestStream(
                new SequenceInputStream(new ByteArrayInputStream(head), content), max, limitText);
        String key;
        try {
            key = blobs.put(ownerId, bounded);
        } catch (UncheckedIOException e) {
            throw cutOff(e.getCause());
        }
        Attachment fresh = new Attachment(UUID.randomUUID().toString(), ownerId, threadId, safeName, type,
                bounded.count(), bounded.sha256(), key, clock.instant());
        Attachment saved;
        try {
            saved = meta.saveAttachment(fresh);
        } catch (RuntimeException e) {
            saved = storedDespite(meta, fresh, e);
        }
        if (!saved.blobKey().equals(key)) {
            deleteQuietly(key);
        }
        return saved;
    }

    /**
     * The attachment a failed save stored all the same (its commit happened, its answer was lost: a row names
     * the new blob, or the owner's equal one), read back; otherwise the failure, once the new blob is deleted.
     * When the store cannot say, the blob stays, as a row may name it: the owner's erasure deletes it if none does.
     */
    private Attachment storedDespite(AttachmentStore meta, Attachment fresh, RuntimeException failure) {
        if (failure instanceof ChatException refused && refused.code() != ErrorCode.STORE_FAILURE) {
            deleteQuietly(fresh.blobKey());
            throw failure;
        }
        Optional<Attachment> stored;
        try {
            stored = meta.findAttachment(fresh.id());
        } catch (RuntimeException unknown) {
            failure.addSuppressed(unknown);
            throw failure;
        }
        if (stored.isEmpty()) {
            deleteQuietly(fresh.blobKey());
            throw failure;
        }
        log.info("Saving attachment {} failed after it took effect; it is kept", fresh.id());
        return stored.get();
    }

    /**
     * The owner's attachment.
     *
     * @throws ChatException NOT_FOUND for an unknown id or another owner's attachment; UNSUPPORTED if the host
     *     keeps no attachments
     */
    public Attachment find(String ownerId, String attachmentId) {
        AttachmentStore meta = requireEnabled();
        RequestChecks.owner(ownerId);
        if (attachmentId == null || attachmentId.isBlank()) {
            throw ChatException.notFound("attachment", String.valueOf(attachmentId));
        }
        return meta.findAttachment(attachmentId).filter(a -> a.ownerId().equals(ownerId))
                .filter(a -> chatStore.findThread(a.threadId()).isPresent())
                .orElseThrow(() -> ChatException.notFound("attachment", attachmentId));
    }

    /**
     * The owner's attachment's bytes from {@code offset}; the caller closes the stream.
     *
     * @throws ChatException as {@link #find}; INVALID_INPUT for an offset outside the file
     */
    public InputStream open(String ownerId, String attachmentId, long offset) {
        Attachment attachment = find(ownerId, attachmentId);
        if (offset < 0 || offset > attachment.size()) {
            throw ChatException.invalidInput("offset " + offset + " is outside the file's " + attachment.size()
                    + " bytes");
        }
        return blobs.open(attachment.blobKey(), offset);
    }

    /** Reads the attachments of one owner's runs. */
    public AttachmentContent contentFor(String ownerId) {
        return attachment -> open(ownerId, attachment.id(), 0);
    }

    /**
     * The attachments a message sends, checked: the owner's, uploaded to this thread, each once, within the
     * per-message limits, of types the runtime takes.
     *
     * @throws ChatException NOT_FOUND for an id that is not an attachment of this thread; INVALID_INPUT for a
     *     repeated id, too many files or a type the runtime cannot take; TOO_LARGE past the per-message bytes;
     *     UNSUPPORTED if the host keeps no attachments
     */
    public List<MessageAttachment> forMessage(String ownerId, String threadId, List<String> attachmentIds) {
        if (attachmentIds.isEmpty()) {
            return List.of();
        }
        AttachmentStore meta = requireEnabled();
        if (attachmentIds.size() > limits.maxFilesPerMessage()) {
            throw ChatException.invalidInput("a message may carry at most " + limits.maxFilesPerMessage()
                    + " attachments, got " + attachmentIds.size());
        }
        if (new HashSet<>(attachmentIds).size() != attachmentIds.size()) {
            throw ChatException.invalidInput("an attachment is listed twice");
        }
        Map<String, Attachment> found = new HashMap<>();
        for (Attachment attachment : meta.findAttachments(attachmentIds)) {
            found.put(attachment.id(), attachment);
        }
        List<MessageAttachment> listed = new ArrayList<>(attachmentIds.size());
        long total = 0;
        for (String id : attachmentIds) {
            Attachment attachment = found.get(id);
            if (attachment == null || !attachment.ownerId().equals(ownerId) || !attachment.threadId().equals(threadId)) {
                throw ChatException.notFound("attachment", String.valueOf(id));
            }
            if (!support.accepts(attachment.mediaType())) {
                throw refusedByRuntime(attachment.name(), attachment.mediaType());
            }
            total += attachment.size();
            listed.add(attachment.toMessageAttachment());
        }
        if (total > limits.maxBytesPerMessage()) {
            throw new ChatException(ErrorCode.TOO_LARGE, "a message's attachments may hold at most "
                    + limits.maxBytesPerMessage() + " bytes, these hold " + total);
        }
        return List.copyOf(listed);
    }

    /**
     * Deletes from the blob store the blobs deleted threads left unused. Failures are logged and left for the
     * next call (the store keeps the list).
     *
     * @return how many blobs were deleted
     */
    public int purgeUnreferenced() {
        if (store == null) {
            return 0;
        }
        int deleted = 0;
        Set<String> failed = new HashSet<>();
        while (true) {
            List<String> keys = store.unreferencedBlobs(PURGE_PAGE + failed.size());
            List<String> done = new ArrayList<>();
            for (String key : keys) {
                if (failed.contains(key)) {
                    continue;
                }
                try {
                    blobs.delete(key);
                    done.add(key);
                } catch (RuntimeException e) {
                    failed.add(key);
                    log.warn("Deleting the bytes of an unused attachment failed; will try again later", e);
                }
            }
            if (done.isEmpty()) {
                return deleted;
            }
            store.forgetBlobs(done);
            deleted += done.size();
        }
    }

    /** Deletes every blob of an owner, after the owner's threads are erased. */
    public void eraseOwner(String ownerId) {
        if (store != null) {
            purgeUnreferenced();
            blobs.deleteOwner(ownerId);
        }
    }

    private void checkType(String name, String type) {
        if (!limits.allows(type)) {
            throw ChatException.invalidInput("the file '" + name + "' is " + type + ", which may not be attached;"
                    + " allowed: " + String.join(", ", limits.allowedTypes().stream().sorted().toList()));
        }
        if (!support.accepts(type)) {
            throw refusedByRuntime(name, type);
        }
    }

    private ChatException refusedByRuntime(String name, String type) {
        return ChatException.invalidInput("the file '" + name + "' is " + type + ", which the runtime cannot take: "
                + support.limitText());
    }

    private void ownedThread(String ownerId, String threadId) {
        RequestChecks.owner(ownerId);
        if (threadId == null || chatStore.findThread(threadId).filter(t -> t.ownerId().equals(ownerId)).isEmpty()) {
            throw ChatException.notFound("thread", String.valueOf(threadId));
        }
    }

    private AttachmentStore requireEnabled() {
        if (store == null) {
            throw ChatException.unsupported("this host keeps no attachments: its store keeps none or no BlobStore"
                    + " is configured");
        }
        return store;
    }

    private void deleteQuietly(String key) {
        try {
            blobs.delete(key);
        } catch (RuntimeException e) {
            log.warn("Deleting the bytes of a refused or duplicate upload failed", e);
        }
    }

    private static ChatException cutOff(Throwable cause) {
        return new ChatException(ErrorCode.INVALID_INPUT, "the upload was cut off before its end", cause);
    }
}
