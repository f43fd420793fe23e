package dev.parley.chat.store;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The engine's partial update of a thread inside a {@link StoreBatch}: each non-null field is applied,
 * the rest of the thread is left alone, so it never clobbers a concurrent rename.
 *
 * @param runtimeSessionId the runtime's new session id
 * @param lastMessageAt a newer activity time (an older one is ignored)
 * @param defaultTitle a title to set only if the thread has none yet
 * @param activeLeafId the new last message of the active branch
 * @param sessionHeadId the new last message the runtime session has seen
 */
public record ThreadTouch(
        String threadId,
        @Nullable String runtimeSessionId,
        @Nullable Instant lastMessageAt,
        @Nullable String defaultTitle,
        @Nullable String activeLeafId,
        @Nullable String sessionHeadId) {

    public ThreadTouch {
        Objects.requireNonNull(threadId, "threadId");
    }

    /** A touch that leaves the branch and session positions alone. */
    public ThreadTouch(String threadId, @Nullable String runtimeSessionId, @Nullable Instant lastMessageAt,
            @Nullable String defaultTitle) {
        this(threadId, runtimeSessionId, lastMessageAt, defaultTitle, null, null);
    }
}
