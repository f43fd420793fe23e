package dev.parley.chat.model;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** A person's rating of an assistant message. One per owner and message; a new one replaces the old. */
public record Feedback(
        String threadId,
        String runId,
        String messageId,
        String ownerId,
        FeedbackRating rating,
        @Nullable String comment,
        Instant createdAt) {

    public Feedback {
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(messageId, "messageId");
        Objects.requireNonNull(ownerId, "ownerId");
        Objects.requireNonNull(rating, "rating");
        Objects.requireNonNull(createdAt, "createdAt");
    }
}
