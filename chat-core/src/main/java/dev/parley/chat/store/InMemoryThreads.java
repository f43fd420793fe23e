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
     * See {@link ChatStore#searchThreads}: the owner's threads with a matching top-level message, the one whose
     * newest matching message was saved last first, then those only whose title matches, in the list's order;
     * matching as {@link InMemoryText#matches} does; a new list.
     */
    List<ThreadSearchHit> search(String ownerId, SearchQuery query, int offset, int limit, InMemoryMessages messages) {
        record Found(ThreadSearchHit hit, long newest) {
        }
        List<Found> inMessages = new ArrayList<>();
        List<ThreadSearchHit> inTitles = new ArrayList<>();
        for (ChatThread thread : threads.values()) {
            if (!thread.ownerId().equals(ownerId)) {
                continue;
            }
            Message newest = null;
            for (Message message : messages.topLevel(thread.id())) {
                if (InMemoryText.matches(InMemoryText.searchable(message), query)) {
                    newest = message;
                }
            }
            if (newest != null) {
                String text = InMemoryText.searchable(newest);
                inMessages.add(new Found(new ThreadSearchHit(thread, InMemoryText.snippet(text, query), newest.id()),
                        messages.saveOrderOf(newest.id())));
            } else if (InMemoryText.matches(thread.title(), query)) {
                inTitles.add(new ThreadSearchHit(thread, InMemoryText.snippet(thread.title(), query), null));
            }
        }
        List<ThreadSearchHit> ordered = new ArrayList<>();
        inMessages.stream().sorted(Comparator.comparingLong(Found::newest).reversed()).forEach(f -> ordered.add(f.hit()));
        inTitles.stream().sorted(Comparator.comparing(ThreadSearchHit::thread, LIST_ORDER)).forEach(ordered::add);
        return ordered.stream().skip(offset).limit(limit).collect(Collectors.toList());
    }
}
