package dev.parley.chat.engine.internal;

import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageKind;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.ConversationHistory;
import dev.parley.chat.store.ChatStore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A run's conversation so far, read from the store on first use: the active branch up to the message the
 * run's question follows, each answer with its tool calls and results, within the engine's history limits
 * (newest kept). Of each answer's steps only its newest {@link EngineLimits#maxStepsPerAnswer()} are read
 * (one bounded read for all answers); a result whose call is older than those is left out with it.
 * Thread-safe; reads once.
 */
final class StoredHistory implements ConversationHistory {
    private final ChatStore store;
    private final EngineLimits limits;
    private final String threadId;
    private final @Nullable String lastMessageId;
    private volatile @Nullable List<Message> read;

    /** @param lastMessageId the last message before the run's question; null when the question comes first */
    StoredHistory(ChatStore store, EngineLimits limits, String threadId, @Nullable String lastMessageId) {
        this.store = store;
        this.limits = limits;
        this.threadId = threadId;
        this.lastMessageId = lastMessageId;
    }

    @Override
    public List<Message> messages() {
        List<Message> messages = read;
        if (messages == null) {
            synchronized (this) {
                messages = read;
                if (messages == null) {
                    messages = load();
                    read = messages;
                }
            }
        }
        return messages;
    }

    private List<Message> load() {
        if (lastMessageId == null) {
            return List.of();
        }
        List<Message> turns = store.listBranch(threadId, lastMessageId, null, limits.historyMessages());
        List<String> runs = turns.stream().filter(m -> m.kind() == MessageKind.ASSISTANT).map(Message::runId).toList();
        Map<String, List<Message>> tools = new HashMap<>();
        Set<String> calls = new HashSet<>();
        for (Message step : runs.isEmpty() ? List.<Message>of()
                : store.listNewestStepMessages(runs, limits.maxStepsPerAnswer())) {
            if (step instanceof ActionExecutionMessage call) {
                calls.add(call.runId() + "/" + call.executionId());
            } else if (!(step instanceof ResultMessage result)
                    || !calls.contains(result.runId() + "/" + result.executionId())) {
                continue;
            }
            tools.computeIfAbsent(step.runId(), k -> new ArrayList<>()).add(step);
        }
        List<List<Message>> groups = new ArrayList<>();
        for (Message turn : turns) {
            List<Message> group = new ArrayList<>();
            group.add(turn);
            if (turn.kind() == MessageKind.ASSISTANT) {
                group.addAll(tools.getOrDefault(turn.runId(), List.of()));
            }
            groups.add(group);
        }
        int budget = limits.historyCharacters();
        int first = groups.size();
        while (first > 0) {
            int size = groups.get(first - 1).stream().mapToInt(StoredHistory::characters).sum();
            if (size > budget) {
                break;
            }
            budget -= size;
            first--;
        }
        List<Message> kept = new ArrayList<>();
        groups.subList(first, groups.size()).forEach(kept::addAll);
        return List.copyOf(kept);
    }

    private static int characters(Message message) {
        if (message instanceof UserMessage user) {
            return user.text().length();
        }
        if (message instanceof AssistantMessage answer) {
            return answer.text().length();
        }
        if (message instanceof ActionExecutionMessage call) {
            return call.arguments().length();
        }
        if (message instanceof ResultMessage result) {
            return result.result().length();
        }
        return 0;
    }
}
