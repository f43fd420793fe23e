package dev.parley.chat.store;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Message;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * {@link InMemoryChatStore}'s threads: creating, reading, listing an owner's threads page by page, the edits
 * a person makes, the engine's touches, and the search over titles and messages. Not thread-safe: the
 * store calls it under its one lock.
 */
final class InMemoryThreads {
    /** The thread list's order: newest activity first, then greatest id first. */
    private static final Comparator<ChatThread> LIST_ORDER =
            Comparator.comparing(ChatThread::lastMessageAt).thenComparing(ChatThread::id).reversed();

    private final Map<String, ChatThread> threads = new HashMap<>();

    /** Stores a new thread; {@code CONFLICT} if its id exists. */
    void create(ChatThread thread) {
        if (threads.containsKey(thread.id())) {
            throw new ChatException(ErrorCode.CONFLICT, "thread exists: " + thread.id());
        }
        threads.put(thread.id(), thread);
    }

    Optional<ChatThread> find(String threadId) {
        return Optional.ofNullable(threads.get(threadId));
    }

    boolean exists(String threadId) {
        return threads.containsKey(threadId);
    }

    /** See {@link ChatStore#listThreads}; a new list. */
    List<ChatThread> list(String ownerId, @Nullable ThreadCursor after, int limit) {
        return threads.values().stream()
                .filter(t -> t.ownerId().equals(ownerId))
                .filter(t -> after == null || isAfter(t, after))
                .sorted(LIST_ORDER)
                .limit(limit)
                .collect(Collectors.toList());
    }

    private static boolean isAfter(ChatThread thread, ThreadCursor cursor) {
        int byTime = thread.lastMessageAt().compareTo(cursor.lastMessageAt());
        return byTime < 0 || (byTime == 0 && thread.id().compareTo(cursor.id()) < 0);
    }

    /** Replaces the fields a person edits; false if the thread does not exist. */
    boolean update(ChatThread thread) {
        ChatThread stored = threads.get(thread.id());
        if (stored == null) {
            return false;
        }
        threads.put(thread.id(), stored.withTitle(thread.title()).withModelId(thread.modelId())
                .withSkill(thread.skill()).withStatus(thread.status()));
        return true;
    }

    /** Removes the thread alone; false if it does not exist. */
    boolean delete(String threadId) {
        return threads.remove(threadId) != null;
    }

    /** Applies a touch to its thread (see {@link ThreadTouch}); a touch of a missing thread is ignored. */
    void touch(ThreadTouch touch) {
        ChatThread thread = threads.get(touch.threadId());
        if (thread == null) {
            return;
        }
        if (touch.runtimeSessionId() != null) {
            thread = thread.withRuntimeSessionId(touch.runtimeSessionId());
        }
        if (touch.lastMessageAt() != null && touch.lastMessageAt().isAfter(thread.lastMessageAt())) {
            thread = thread.withLastMessageAt(touch.lastMessageAt());
        }
        if (touch.defaultTitle() != null && thread.title() == null) {
            thread = thread.withTitle(touch.defaultTitle());
        }
        if (touch.activeLeafId() != null) {
            thread = thread.withActiveLeafId(touch.activeLeafId());
        }
        if (touch.sessionHeadId() != null) {
            thread = thread.withSessionHeadId(touch.sessionHeadId());
        }
        threads.put(thread.id(), thread);
    }

    /**
     * See {@link ChatStore#searchThreads}: an owner's threads scored by their title and their top-level
     * messages' texts ({@link InMemoryText}), best first, ties in the list's order; a new list.
     */
    List<ThreadSearchHit> search(String ownerId, SearchQuery query, int offset, int limit, InMemoryMessages messages) {
        record Scored(ThreadSearchHit hit, int score) {
        }
        List<Scored> found = new ArrayList<>();
        for (ChatThread thread : threads.values()) {
            if (!thread.ownerId().equals(ownerId)) {
                continue;
            }
            int best = InMemoryText.score(thread.title(), query);
            int total = best;
            String snippet = best > 0 ? InMemoryText.snippet(thread.title(), query) : null;
            String from = null;
            for (Message message : messages.topLevel(thread.id())) {
                String text = InMemoryText.searchable(message);
                int score = InMemoryText.score(text, query);
                total += score;
                if (score > best) {
                    best = score;
                    snippet = InMemoryText.snippet(text, query);
                    from = message.id();
                }
            }
            if (total > 0) {
                found.add(new Scored(new ThreadSearchHit(thread, snippet, from), total));
            }
        }
        return found.stream()
                .sorted(Comparator.comparingInt(Scored::score).reversed()
                        .thenComparing(s -> s.hit().thread(), LIST_ORDER))
                .skip(offset).limit(limit).map(Scored::hit)
                .collect(Collectors.toList());
    }
}
