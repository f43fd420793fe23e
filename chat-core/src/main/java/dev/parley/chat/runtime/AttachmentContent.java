package dev.parley.chat.runtime;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.model.MessageAttachment;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/**
 * Reads the bytes of the attachments of a run's conversation (its question's and those in its history), for a
 * runtime that passes them on. Only the run's owner's attachments can be read. Thread-safe.
 */
public interface AttachmentContent {

    /**
     * The attachment's bytes; the caller closes the stream.
     *
     * @throws ChatException NOT_FOUND if it is not an attachment of the run's owner (or it was deleted);
     *     STORE_FAILURE if it cannot be read
     */
    InputStream open(MessageAttachment attachment);

    /** All of the attachment's bytes (they are bounded by the host's attachment limits). */
    default byte[] readAllBytes(MessageAttachment attachment) {
        try (InputStream in = open(attachment)) {
            return in.readAllBytes();
        } catch (IOException e) {
            throw new ChatException(ErrorCode.STORE_FAILURE, "reading attachment " + attachment.id() + " failed",
                    new UncheckedIOException(e));
        }
    }

    /** No attachments can be read (a request built without an engine). */
    static AttachmentContent none() {
        return attachment -> {
            throw ChatException.notFound("attachment", attachment.id());
        };
    }
}
