package dev.parley.chat.store;

import java.time.Instant;
import java.util.Objects;

/**
 * A place in an owner's thread list, which is ordered by {@code lastMessageAt} descending, then {@code id}
 * descending: the last thread of a page. The next page holds the threads strictly after it in that order,
 * so a thread whose activity moves it to the front while someone pages is neither repeated nor makes
 * another thread be skipped.
 */
public record ThreadCursor(Instant lastMessageAt, String id) {
    public ThreadCursor {
        Objects.requireNonNull(lastMessageAt, "lastMessageAt");
        Objects.requireNonNull(id, "id");
    }
}
