package dev.parley.chat.store;

import dev.parley.chat.model.Feedback;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * {@link InMemoryChatStore}'s feedback: one rating per message and owner, the last one given. Not
 * thread-safe: the store calls it under its one lock. Lists returned are new.
 */
final class InMemoryFeedback {
    /** Keyed by "messageId\0ownerId". */
    private final Map<String, Feedback> feedback = new HashMap<>();

    /** Stores the owner's rating of the message, replacing an earlier one. */
    void save(Feedback rating) {
        feedback.put(rating.messageId() + '\u0000' + rating.ownerId(), rating);
    }

    /** Removes the feedback given in a thread, by any owner. */
    void deleteOfThread(String threadId) {
        feedback.values().removeIf(rating -> rating.threadId().equals(threadId));
    }

    Optional<Feedback> find(String messageId, String ownerId) {
        return Optional.ofNullable(feedback.get(messageId + '\u0000' + ownerId));
    }

    /** The feedback given on these messages, by any owner. */
    List<Feedback> list(Collection<String> messageIds) {
        Set<String> wanted = new HashSet<>(messageIds);
        return feedback.values().stream().filter(f -> wanted.contains(f.messageId())).collect(Collectors.toList());
    }
}
