package dev.parley.chat.engine;

import dev.parley.chat.ChatException;
import dev.parley.chat.attachment.Attachment;
import dev.parley.chat.attachment.AttachmentLimits;
import dev.parley.chat.engine.internal.AttachmentWork;
import dev.parley.chat.runtime.AttachmentSupport;
import java.io.InputStream;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * Files and images people send with their messages: upload one to a thread, then send its id with a message
 * ({@link StartRun#attachmentIds()}); the runtime receives it with the message, in its own form. Get it from
 * {@link ChatEngine#attachments()}.
 *
 * <ul>
 *   <li>The media type is read from the content; a claimed type the content contradicts is refused. The name is
 *       sanitised (no path, no control characters).</li>
 *   <li>{@link AttachmentLimits} are enforced while the bytes stream in: past a limit the upload stops at once
 *       and nothing of it is kept. A type the runtime cannot take ({@link AttachmentSupport}) is refused before
 *       anything is stored.</li>
 *   <li>An owner's equal files are stored once. Deleting the thread deletes its attachments; erasing the owner
 *       deletes every byte. An upload no message sends stays until its thread is deleted; the bytes of an upload
 *       a failure interrupted, which no attachment names, stay until the owner is erased.</li>
 *   <li>Another owner's attachment is NOT_FOUND.</li>
 * </ul>
 * Thread-safe. Errors are {@link ChatException}s; every method throws UNSUPPORTED if the host keeps no
 * attachments (its store keeps none, or no blob store was configured).
 */
public final class ChatAttachments {
    private final AttachmentWork work;

    ChatAttachments(AttachmentWork work) {
        this.work = work;
    }

    /**
     * Stores a file for the owner's thread, reading {@code content} to its end (the caller closes it).
     *
     * @param name the file's name as the sender gave it; null for none
     * @param claimedType the media type the sender claims; null or blank to let the content tell
     * @throws ChatException NOT_FOUND for an unknown or another owner's thread; INVALID_INPUT for an empty
     *     file, content that contradicts its claimed type, a type not allowed or that the runtime cannot take,
     *     an upload cut off before its end; TOO_LARGE past the per-file or per-owner limit
     */
    public Attachment upload(String ownerId, String threadId, @Nullable String name, @Nullable String claimedType,
            InputStream content) {
        return work.upload(ownerId, threadId, name, claimedType, content);
    }

    /**
     * The owner's attachment.
     *
     * @throws ChatException NOT_FOUND for an unknown id or another owner's attachment
     */
    public Attachment find(String ownerId, String attachmentId) {
        return work.find(ownerId, attachmentId);
    }

    /**
     * The bytes of the owner's attachment from {@code offset} (0 for all) to its end; the caller closes it.
     *
     * @throws ChatException as {@link #find}; INVALID_INPUT for an offset past the end
     */
    public InputStream open(String ownerId, String attachmentId, long offset) {
        return work.open(ownerId, attachmentId, offset);
    }

    /** True if this host keeps attachments. */
    public boolean enabled() {
        return work.enabled();
    }

    public AttachmentLimits limits() {
        return work.limits();
    }

    /** What the runtime takes. */
    public AttachmentSupport runtimeSupport() {
        return work.support();
    }

    /**
     * The media types a person can attach here: those the {@link #limits()} allow that the runtime also takes,
     * sorted, {@code family/*} where both take the whole family. Empty when the host keeps no attachments or
     * the runtime takes none, so a page can hide its attach button. Suits an {@code <input accept>}.
     */
    public List<String> acceptedTypes() {
        if (!work.enabled()) {
            return List.of();
        }
        AttachmentSupport support = work.support();
        Set<String> accepted = new TreeSet<>();
        for (String allowed : work.limits().allowedTypes()) {
            if (!allowed.endsWith("/*")) {
                if (support.accepts(allowed)) {
                    accepted.add(allowed);
                }
                continue;
            }
            String family = allowed.substring(0, allowed.length() - 1);
            if (support.mediaTypes().contains(allowed) || support.mediaTypes().contains("*/*")) {
                accepted.add(allowed);
            } else {
                support.mediaTypes().stream().filter(type -> type.startsWith(family) && !type.endsWith("/*"))
                        .forEach(accepted::add);
            }
        }
        return List.copyOf(accepted);
    }
}
