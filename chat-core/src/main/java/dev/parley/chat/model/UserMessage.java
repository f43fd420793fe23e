package dev.parley.chat.model;

import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What the person wrote.
 *
 * @param parentMessageId the message it answers in the conversation: the active branch's last message when
 *     it was sent (an edit has the same parent as the message it edits); null for a thread's first message
 * @param clientMessageId the id the sending client gave it (an idempotency key: a retried send with the
 *     same id starts nothing new); null if none was given
 * @param attachments the files and images sent with it, in the order they were given; empty for none
 */
public record UserMessage(
        String id,
        String threadId,
        String runId,
        @Nullable String parentMessageId,
        MessageStatus status,
        Instant createdAt,
        String text,
        @Nullable String clientMessageId,
        List<MessageAttachment> attachments)
        implements Message {

    /** A message without attachments. */
    public UserMessage(String id, String threadId, String runId, @Nullable String parentMessageId, MessageStatus status,
            Instant createdAt, String text, @Nullable String clientMessageId) {
        this(id, threadId, runId, parentMessageId, status, createdAt, text, clientMessageId, List.of());
    }

    /** A message without a client id. */
    public UserMessage(String id, String threadId, String runId, @Nullable String parentMessageId, MessageStatus status,
            Instant createdAt, String text) {
        this(id, threadId, runId, parentMessageId, status, createdAt, text, null);
    }

    public UserMessage {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(text, "text");
        attachments = attachments == null ? List.of() : List.copyOf(attachments);
    }

    @Override
    public MessageKind kind() {
        return MessageKind.USER;
    }
}
