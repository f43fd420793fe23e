package dev.parley.chat.model;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A conversation owned by one caller.
 *
 * @param title the first user message's first 30 characters unless set explicitly
 * @param runtimeSessionId the runtime's own session id (Hermes' {@code session_id}), sent with every run
 *     and replaced when the runtime reports a new one; null before the first run
 * @param modelId the model chosen for new runs, null for the runtime's default
 * @param skill the skill chosen for new runs, null for none
 * @param lastMessageAt the time of the newest message, or the creation time while the thread is empty;
 *     threads are listed newest first by it
 * @param activeLeafId the last message of the conversation's active branch (where the next message goes,
 *     and what the thread view shows); null while empty, or for a thread from before branches (its newest
 *     message then)
 * @param sessionHeadId the last message the runtime session has seen: a message sent after it continues the
 *     session, one sent elsewhere (an edit, another branch) starts a new one; null before the first run, or
 *     for a thread from before branches (the newest answer then)
 */
public record ChatThread(
        String id,
        String ownerId,
        @Nullable String title,
        @Nullable String runtimeSessionId,
        @Nullable String modelId,
        @Nullable String skill,
        ThreadStatus status,
        Instant createdAt,
        Instant lastMessageAt,
        @Nullable String activeLeafId,
        @Nullable String sessionHeadId) {

    /** A thread without a branch position yet. */
    public ChatThread(String id, String ownerId, @Nullable String title, @Nullable String runtimeSessionId,
            @Nullable String modelId, @Nullable String skill, ThreadStatus status, Instant createdAt,
            Instant lastMessageAt) {
        this(id, ownerId, title, runtimeSessionId, modelId, skill, status, createdAt, lastMessageAt, null, null);
    }

    public ChatThread {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(ownerId, "ownerId");
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(createdAt, "createdAt");
        Objects.requireNonNull(lastMessageAt, "lastMessageAt");
    }

    public ChatThread withTitle(@Nullable String newTitle) {
        return new ChatThread(id, ownerId, newTitle, runtimeSessionId, modelId, skill, status, createdAt, lastMessageAt,
                activeLeafId, sessionHeadId);
    }

    public ChatThread withRuntimeSessionId(@Nullable String sessionId) {
        return new ChatThread(id, ownerId, title, sessionId, modelId, skill, status, createdAt, lastMessageAt,
                activeLeafId, sessionHeadId);
    }

    public ChatThread withModelId(@Nullable String newModelId) {
        return new ChatThread(id, ownerId, title, runtimeSessionId, newModelId, skill, status, createdAt, lastMessageAt,
                activeLeafId, sessionHeadId);
    }

    public ChatThread withSkill(@Nullable String newSkill) {
        return new ChatThread(id, ownerId, title, runtimeSessionId, modelId, newSkill, status, createdAt, lastMessageAt,
                activeLeafId, sessionHeadId);
    }

    public ChatThread withStatus(ThreadStatus newStatus) {
        return new ChatThread(id, ownerId, title, runtimeSessionId, modelId, skill, newStatus, createdAt, lastMessageAt,
                activeLeafId, sessionHeadId);
    }

    public ChatThread withLastMessageAt(Instant time) {
        return new ChatThread(id, ownerId, title, runtimeSessionId, modelId, skill, status, createdAt, time,
                activeLeafId, sessionHeadId);
    }

    public ChatThread withActiveLeafId(@Nullable String leafId) {
        return new ChatThread(id, ownerId, title, runtimeSessionId, modelId, skill, status, createdAt, lastMessageAt,
                leafId, sessionHeadId);
    }

    public ChatThread withSessionHeadId(@Nullable String headId) {
        return new ChatThread(id, ownerId, title, runtimeSessionId, modelId, skill, status, createdAt, lastMessageAt,
                activeLeafId, headId);
    }
}
