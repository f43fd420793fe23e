package dev.parley.chat.store;

import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageKind;
import dev.parley.chat.model.UserMessage;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * {@link InMemoryChatStore}'s messages and the conversation tree: each message with its first-save place,
 * a thread's user and assistant messages and a run's steps in that order, an answer's variants, and the
 * walks along parent links (branches, edits, descendants). Not thread-safe: the store calls it under its
 * one lock. Lists and maps returned are new.
 */
final class InMemoryMessages {
    private final Map<String, Message> messages = new HashMap<>();
    /** Per thread, the ids of its user and assistant messages in first-save order. */
    private final Map<String, List<String>> topLevelByThread = new HashMap<>();
    /** Per run, the ids of its step messages in first-save order. */
    private final Map<String, List<String>> stepsByRun = new HashMap<>();
    private final Map<String, List<String>> variantsByParent = new HashMap<>();
    /** Each message's first-save position (ascending across the store). */
    private final Map<String, Long> saveOrder = new HashMap<>();
    private long nextSaveOrder;

    /** Stores a message; one saved again keeps its first place (in save order, its thread, run and parent). */
    void save(Message message) {
        Message previous = messages.put(message.id(), message);
        if (previous != null) {
            return;
        }
        saveOrder.put(message.id(), nextSaveOrder++);
        if (message.kind().isTopLevel()) {
            topLevelByThread.computeIfAbsent(message.threadId(), k -> new ArrayList<>()).add(message.id());
            if (message.kind() == MessageKind.ASSISTANT && message.parentMessageId() != null) {
                variantsByParent.computeIfAbsent(message.parentMessageId(), k -> new ArrayList<>()).add(message.id());
            }
        } else {
            stepsByRun.computeIfAbsent(message.runId(), k -> new ArrayList<>()).add(message.id());
        }
    }

    /**
     * Removes every message of a thread (also steps of runs that were never stored), with their places and
     * variant lists.
     */
    void deleteOfThread(String threadId) {
        Set<String> messageIds = new HashSet<>();
        for (Message message : messages.values()) {
            if (message.threadId().equals(threadId)) {
                messageIds.add(message.id());
            }
        }
        topLevelByThread.remove(threadId);
        for (String messageId : messageIds) {
            Message message = messages.remove(messageId);
            saveOrder.remove(messageId);
            variantsByParent.remove(messageId);
            List<String> steps = stepsByRun.get(message.runId());
            if (steps != null && steps.remove(messageId) && steps.isEmpty()) {
                stepsByRun.remove(message.runId());
            }
        }
    }

    Optional<Message> find(String messageId) {
        return Optional.ofNullable(messages.get(messageId));
    }

    /** See {@link ChatStore#findMessages}: the ones that exist, in first-save order. */
    List<Message> findAll(Collection<String> messageIds) {
        return messageIds.stream().distinct().map(messages::get).filter(Objects::nonNull)
                .sorted(Comparator.comparing(m -> saveOrder.get(m.id())))
                .collect(Collectors.toList());
    }

    /** A stored message's first-save position: higher is later, across the store. */
    long saveOrderOf(String messageId) {
        return saveOrder.get(messageId);
    }

    /** A thread's user and assistant messages in first-save order. */
    List<Message> topLevel(String threadId) {
        return collect(topLevelByThread.getOrDefault(threadId, List.of()));
    }

    /** See {@link ChatStore#listTopLevelMessages}: the page that ends right before {@code beforeMessageId}. */
    List<Message> listTopLevel(String threadId, @Nullable String beforeMessageId, int limit) {
        List<String> ids = topLevelByThread.getOrDefault(threadId, List.of());
        int end = ids.size();
        if (beforeMessageId != null) {
            end = ids.indexOf(beforeMessageId);
            if (end < 0) {
                return List.of();
            }
        }
        int start = Math.max(0, end - limit);
        return collect(ids.subList(start, end));
    }

    /** See {@link ChatStore#listTopLevelMessagesAfter}: the page that starts right after {@code afterMessageId}. */
    List<Message> listTopLevelAfter(String threadId, @Nullable String afterMessageId, int limit) {
        List<String> ids = topLevelByThread.getOrDefault(threadId, List.of());
        int start = afterMessageId == null ? 0 : ids.indexOf(afterMessageId) + 1;
        if (afterMessageId != null && start == 0) {
            return List.of();
        }
        return collect(ids.subList(start, Math.min(ids.size(), start + limit)));
    }

    /** See {@link ChatStore#listNewestStepMessages}: each run's newest {@code limitPerRun}, in first-save order. */
    List<Message> listNewestSteps(Collection<String> runIds, int limitPerRun) {
        if (limitPerRun < 1) {
            return List.of();
        }
        List<Message> steps = new ArrayList<>();
        for (String runId : new LinkedHashSet<>(runIds)) {
            List<String> ids = stepsByRun.getOrDefault(runId, List.of());
            steps.addAll(collect(ids.subList(Math.max(0, ids.size() - limitPerRun), ids.size())));
        }
        steps.sort(Comparator.comparing(m -> saveOrder.get(m.id())));
        return steps;
    }

    /** See {@link ChatStore#listStepMessagesAfter}: the page of a run's steps right after {@code afterStepId}. */
    List<Message> listStepsAfter(String runId, @Nullable String afterStepId, int limit) {
        List<String> ids = stepsByRun.getOrDefault(runId, List.of());
        int start = afterStepId == null ? 0 : ids.indexOf(afterStepId) + 1;
        if (limit < 1 || afterStepId != null && start == 0) {
            return List.of();
        }
        return collect(ids.subList(Math.min(ids.size(), start), Math.min(ids.size(), start + limit)));
    }

    /** See {@link ChatStore#countStepMessages}: runs without steps are left out. */
    Map<String, Integer> countSteps(Collection<String> runIds) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (String runId : runIds) {
            List<String> ids = stepsByRun.get(runId);
            if (ids != null && !ids.isEmpty()) {
                counts.put(runId, ids.size());
            }
        }
        return counts;
    }

    private List<Message> collect(List<String> ids) {
        List<Message> found = new ArrayList<>(ids.size());
        for (String id : ids) {
            found.add(messages.get(id));
        }
        return found;
    }

    /** See {@link ChatStore#findVariantIds}: parents without variants are left out. */
    Map<String, List<String>> findVariantIds(Collection<String> parentMessageIds) {
        Map<String, List<String>> result = new LinkedHashMap<>();
        for (String parent : parentMessageIds) {
            List<String> ids = variantsByParent.get(parent);
            if (ids != null) {
                result.put(parent, List.copyOf(ids));
            }
        }
        return result;
    }

    /** The user message of the thread with this client id, if any. */
    Optional<UserMessage> findUserByClientId(String threadId, String clientMessageId) {
        for (String id : topLevelByThread.getOrDefault(threadId, List.of())) {
            if (messages.get(id) instanceof UserMessage user && clientMessageId.equals(user.clientMessageId())) {
                return Optional.of(user);
            }
        }
        return Optional.empty();
    }

    /** See {@link ChatStore#listBranch}: the path from the root to {@code leafId}, paged from its end. */
    List<Message> listBranch(String threadId, String leafId, @Nullable String beforeMessageId, int limit) {
        List<Message> path = new ArrayList<>();
        for (Message at = topLevelOf(threadId, leafId); at != null; at = parentOf(at)) {
            path.add(0, at);
        }
        int end = path.size();
        if (beforeMessageId != null) {
            end = -1;
            for (int i = 0; i < path.size(); i++) {
                if (path.get(i).id().equals(beforeMessageId)) {
                    end = i;
                }
            }
            if (end < 0) {
                return List.of();
            }
        }
        return List.copyOf(path.subList(Math.max(0, end - limit), end));
    }

    private @Nullable Message topLevelOf(String threadId, @Nullable String messageId) {
        Message message = messageId == null ? null : messages.get(messageId);
        return message != null && message.threadId().equals(threadId) && message.kind().isTopLevel() ? message : null;
    }

    private @Nullable Message parentOf(Message message) {
        return topLevelOf(message.threadId(), message.parentMessageId());
    }

    /** See {@link ChatStore#findUserSiblingIds}: per user message of the thread, the ones with its parent. */
    Map<String, List<String>> findUserSiblingIds(String threadId, Collection<String> userMessageIds) {
        Map<String, List<String>> result = new LinkedHashMap<>();
        List<String> thread = topLevelByThread.getOrDefault(threadId, List.of());
        for (String id : userMessageIds) {
            if (!(topLevelOf(threadId, id) instanceof UserMessage user)) {
                continue;
            }
            List<String> siblings = new ArrayList<>();
            for (String other : thread) {
                if (messages.get(other) instanceof UserMessage candidate
                        && Objects.equals(candidate.parentMessageId(), user.parentMessageId())) {
                    siblings.add(other);
                }
            }
            result.put(id, siblings);
        }
        return result;
    }

    /** See {@link ChatStore#findNewestDescendant}: empty if the message is not a top-level one of the thread. */
    Optional<String> findNewestDescendant(String threadId, String messageId) {
        if (topLevelOf(threadId, messageId) == null) {
            return Optional.empty();
        }
        Set<String> below = new HashSet<>(List.of(messageId));
        String newest = messageId;
        for (String id : topLevelByThread.getOrDefault(threadId, List.of())) {
            Message message = messages.get(id);
            if (message.parentMessageId() != null && below.contains(message.parentMessageId())) {
                below.add(id);
                newest = id;
            }
        }
        return Optional.of(newest);
    }
}
