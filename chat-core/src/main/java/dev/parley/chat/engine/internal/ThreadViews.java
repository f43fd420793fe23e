package dev.parley.chat.engine.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.engine.ThreadView;
import dev.parley.chat.engine.BranchPosition;
import dev.parley.chat.engine.VariantPosition;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageKind;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.store.ChatStore;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Reads a conversation as its tree: the active branch (from the thread's first message to its active leaf),
 * every answer of each question on it side by side (regenerated variants), and at each fork the siblings'
 * count and position (edits of a user message, variants of an answer), each answer with its newest steps (see
 * {@link ThreadView#omittedSteps()}). A run still going on in this process shows its live messages.
 * Thread-safe.
 */
public final class ThreadViews {
    private final EngineContext ctx;
    private final RunManager runs;

    public ThreadViews(EngineContext ctx, RunManager runs) {
        this.ctx = ctx;
        this.runs = runs;
    }

    /**
     * The last message of the thread's active branch: the one the thread records, or for a thread from before
     * branches its newest user or assistant message; null while the thread is empty.
     */
    public @Nullable String activeLeaf(ChatThread thread) {
        if (thread.activeLeafId() != null) {
            return thread.activeLeafId();
        }
        List<Message> newest = ctx.store.listTopLevelMessages(thread.id(), null, 1);
        return newest.isEmpty() ? null : newest.get(0).id();
    }

    /** The messages of the active branch, oldest first, at most {@code limit} of the newest. */
    public List<Message> branch(ChatThread thread, int limit) {
        String leaf = activeLeaf(thread);
        return leaf == null ? List.of() : ctx.store.listBranch(thread.id(), leaf, null, limit);
    }

    /**
     * A page of the active branch: its newest {@code limit} messages before {@code before} (a message on the
     * branch; null for the newest), each answer with its variants and newest steps. Reads {@code limit + 1}
     * messages of the branch, and one more to check a cursor before which there is nothing; of each answer's
     * run at most {@code maxStepsPerAnswer + 1} steps, and a count of the steps of runs that have more.
     *
     * @throws ChatException INVALID_INPUT if {@code before} is neither a user or assistant message on the
     *     branch nor a first message of the thread (before which the page is empty)
     */
    public ThreadView view(ChatThread thread, @Nullable String before, int limit) {
        ChatStore store = ctx.store;
        String leaf = activeLeaf(thread);
        List<Message> path = leaf == null ? List.of() : store.listBranch(thread.id(), leaf, before, limit + 1);
        if (before != null && path.isEmpty() && !isFirstMessage(thread, before)) {
            throw ChatException.invalidInput("before must be the id of a user or assistant message on the thread's "
                    + "active branch");
        }
        String olderCursor = null;
        if (path.size() > limit) {
            path = path.subList(1, path.size());
            olderCursor = path.get(0).id();
        }
        Map<String, List<String>> variantIds = store.findVariantIds(parentsOfAnswers(path));
        Map<String, Message> variants = variantsOffPath(path, variantIds);
        List<Message> top = new ArrayList<>();
        Set<String> shown = new LinkedHashSet<>();
        for (Message message : path) {
            List<String> answers = message.kind() == MessageKind.ASSISTANT && message.parentMessageId() != null
                    ? variantIds.getOrDefault(message.parentMessageId(), List.of(message.id())) : List.of(message.id());
            for (String id : answers) {
                Message shownMessage = id.equals(message.id()) ? message : variants.get(id);
                if (shownMessage != null && shown.add(id)) {
                    top.add(shownMessage);
                }
            }
        }
        Page page = withStepsAndLiveState(top);
        return new ThreadView(thread, page.messages(), positions(top, variantIds), userPositions(thread, top),
                olderCursor, page.omittedSteps());
    }

    /**
     * Whether {@code messageId} is a top-level message of the thread that follows no other: nothing comes
     * before it on any branch. (Any other message on the active branch has its parent before it, so an empty
     * page before it means it is not on the branch.) One message read, whatever the branch's length.
     */
    private boolean isFirstMessage(ChatThread thread, String messageId) {
        return ctx.store.findMessage(messageId).filter(m -> m.threadId().equals(thread.id()) && m.kind().isTopLevel()
                && m.parentMessageId() == null).isPresent();
    }

    private static Set<String> parentsOfAnswers(List<Message> path) {
        Set<String> parents = new LinkedHashSet<>();
        for (Message message : path) {
            if (message.kind() == MessageKind.ASSISTANT && message.parentMessageId() != null) {
                parents.add(message.parentMessageId());
            }
        }
        return parents;
    }

    private Map<String, Message> variantsOffPath(List<Message> path, Map<String, List<String>> variantIds) {
        Set<String> onPath = new LinkedHashSet<>();
        path.forEach(m -> onPath.add(m.id()));
        Set<String> wanted = new LinkedHashSet<>();
        variantIds.values().forEach(ids -> ids.stream().filter(id -> !onPath.contains(id)).forEach(wanted::add));
        Map<String, Message> found = new HashMap<>();
        for (Message message : wanted.isEmpty() ? List.<Message>of() : ctx.store.findMessages(wanted)) {
            found.put(message.id(), message);
        }
        return found;
    }

    /** A page's messages, each answer followed by the steps shown, and per answer how many steps are left out. */
    private record Page(List<Message> messages, Map<String, Integer> omittedSteps) {
    }

    /**
     * Each answer followed by its newest {@link dev.parley.chat.engine.EngineLimits#maxStepsPerAnswer()} steps;
     * answers of runs going on here as their live messages show them. The stored runs' steps are one bounded
     * read (that many and one more per run, to see which runs have more); the runs that have more are counted,
     * to say how many steps the page leaves out.
     */
    private Page withStepsAndLiveState(List<Message> top) {
        int shown = ctx.limits.maxStepsPerAnswer();
        Map<String, List<Message>> stepsByRun = new HashMap<>();
        Map<String, Integer> stepCounts = new HashMap<>();
        Map<String, Message> liveTop = new HashMap<>();
        List<String> storedRuns = new ArrayList<>();
        for (Message message : top) {
            if (message.kind() != MessageKind.ASSISTANT) {
                continue;
            }
            List<Message> live = message.status() == MessageStatus.IN_PROGRESS ? runs.liveMessages(message.runId()) : null;
            if (live == null) {
                storedRuns.add(message.runId());
                continue;
            }
            List<Message> steps = new ArrayList<>();
            for (Message m : live) {
                if (m.id().equals(message.id())) {
                    liveTop.put(m.id(), m);
                } else if (!m.kind().isTopLevel()) {
                    steps.add(m);
                }
            }
            if (steps.size() > shown) {
                stepCounts.put(message.runId(), steps.size());
            }
            stepsByRun.put(message.runId(), newest(steps, shown));
        }
        Map<String, List<Message>> stored = new HashMap<>();
        for (Message step : storedRuns.isEmpty() ? List.<Message>of()
                : ctx.store.listNewestStepMessages(storedRuns, oneMore(shown))) {
            stored.computeIfAbsent(step.runId(), k -> new ArrayList<>()).add(step);
        }
        List<String> longer = new ArrayList<>();
        stored.forEach((runId, steps) -> {
            if (steps.size() > shown) {
                longer.add(runId);
            }
            stepsByRun.put(runId, newest(steps, shown));
        });
        if (!longer.isEmpty()) {
            Map<String, Integer> counted = ctx.store.countStepMessages(longer);
            for (String runId : longer) {
                stepCounts.put(runId, Math.max(shown + 1, counted.getOrDefault(runId, 0)));
            }
        }
        List<Message> page = new ArrayList<>();
        Map<String, Integer> omitted = new LinkedHashMap<>();
        for (Message message : top) {
            page.add(liveTop.getOrDefault(message.id(), message));
            if (message.kind() == MessageKind.ASSISTANT) {
                page.addAll(stepsByRun.getOrDefault(message.runId(), List.of()));
                Integer count = stepCounts.get(message.runId());
                if (count != null) {
                    omitted.put(message.id(), count - shown);
                }
            }
        }
        return new Page(page, omitted);
    }

    /** {@code limit + 1}, to see whether there are more than {@code limit}; no bound stays no bound. */
    static int oneMore(int limit) {
        return limit == Integer.MAX_VALUE ? limit : limit + 1;
    }

    /** The last {@code limit} of these steps. */
    private static List<Message> newest(List<Message> steps, int limit) {
        return steps.size() <= limit ? steps : List.copyOf(steps.subList(steps.size() - limit, steps.size()));
    }

    private static Map<String, VariantPosition> positions(List<Message> top, Map<String, List<String>> variantIds) {
        Map<String, VariantPosition> variants = new LinkedHashMap<>();
        for (Message message : top) {
            if (message.kind() == MessageKind.ASSISTANT) {
                List<String> ids = message.parentMessageId() == null ? List.of()
                        : variantIds.getOrDefault(message.parentMessageId(), List.of());
                variants.put(message.id(), position(ids, message.id()));
            }
        }
        return variants;
    }

    private Map<String, BranchPosition> userPositions(ChatThread thread, List<Message> top) {
        List<String> users = top.stream().filter(m -> m.kind() == MessageKind.USER).map(Message::id).toList();
        Map<String, List<String>> siblings = users.isEmpty() ? Map.of()
                : ctx.store.findUserSiblingIds(thread.id(), users);
        Map<String, BranchPosition> branches = new LinkedHashMap<>();
        for (String id : users) {
            List<String> ids = siblings.getOrDefault(id, List.of());
            int index = ids.indexOf(id);
            branches.put(id, index < 0 ? new BranchPosition(0, 1, List.of(id)) : new BranchPosition(index, ids.size(), ids));
        }
        return branches;
    }

    private static VariantPosition position(List<String> ids, String id) {
        int index = ids.indexOf(id);
        return index < 0 ? new VariantPosition(0, 1) : new VariantPosition(index, ids.size());
    }

    /** The last user message on the active branch, if any. */
    public Optional<Message> lastUserMessage(ChatThread thread) {
        String leaf = activeLeaf(thread);
        String before = null;
        while (leaf != null) {
            List<Message> page = ctx.store.listBranch(thread.id(), leaf, before, ctx.limits.maxPageSize());
            for (int i = page.size() - 1; i >= 0; i--) {
                if (page.get(i).kind() == MessageKind.USER) {
                    return Optional.of(page.get(i));
                }
            }
            if (page.isEmpty()) {
                return Optional.empty();
            }
            before = page.get(0).id();
        }
        return Optional.empty();
    }
}
