package dev.parley.chat.store;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Feedback;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageKind;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.UserMessage;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * A {@link ChatStore} in the heap: fast, and gone when the process ends. For tests, demos and hosts
 * that do not need history across restarts. Thread-safe (one lock); reads return copies.
 */
public final class InMemoryChatStore implements ChatStore {

    private final Object lock = new Object();
    private final Map<String, ChatThread> threads = new HashMap<>();
    private final Map<String, Message> messages = new HashMap<>();
    /** Per thread, the ids of its user and assistant messages in first-save order. */
    private final Map<String, List<String>> topLevelByThread = new HashMap<>();
    /** Per run, the ids of its step messages in first-save order. */
    private final Map<String, List<String>> stepsByRun = new HashMap<>();
    private final Map<String, List<String>> variantsByParent = new HashMap<>();
    private final Map<String, Run> runs = new LinkedHashMap<>();
    private final Map<String, List<RunEvent>> eventsByRun = new HashMap<>();
    private final Map<String, Long> reservedSeqs = new HashMap<>();
    private final Map<String, Map<String, PendingInput>> inputsByRun = new HashMap<>();
    /** "threadId\0toolName" of every approval remembered for a thread. */
    private final Set<String> approvals = new HashSet<>();
    private final Map<String, Feedback> feedback = new HashMap<>();
    /** Each message's first-save position (ascending across the store). */
    private final Map<String, Long> saveOrder = new HashMap<>();
    private long nextSaveOrder;
    private final Set<String> compactedRuns = new HashSet<>();
    private final Map<String, HostActionRecord> hostActions = new HashMap<>();
    private final Map<String, RunLease> leases = new HashMap<>();

    @Override
    public void createThread(ChatThread thread) {
        synchronized (lock) {
            if (threads.containsKey(thread.id())) {
                throw new ChatException(ErrorCode.CONFLICT, "thread exists: " + thread.id());
            }
            threads.put(thread.id(), thread);
        }
    }

    @Override
    public Optional<ChatThread> findThread(String threadId) {
        synchronized (lock) {
            return Optional.ofNullable(threads.get(threadId));
        }
    }

    /** The thread list's order: newest activity first, then greatest id first. */
    private static final Comparator<ChatThread> LIST_ORDER =
            Comparator.comparing(ChatThread::lastMessageAt).thenComparing(ChatThread::id).reversed();

    @Override
    public List<ChatThread> listThreads(String ownerId, @Nullable ThreadCursor after, int limit) {
        synchronized (lock) {
            return threads.values().stream()
                    .filter(t -> t.ownerId().equals(ownerId))
                    .filter(t -> after == null || isAfter(t, after))
                    .sorted(LIST_ORDER)
                    .limit(limit)
                    .collect(java.util.stream.Collectors.toList());
        }
    }

    private static boolean isAfter(ChatThread thread, ThreadCursor cursor) {
        int byTime = thread.lastMessageAt().compareTo(cursor.lastMessageAt());
        return byTime < 0 || (byTime == 0 && thread.id().compareTo(cursor.id()) < 0);
    }

    @Override
    public boolean updateThread(ChatThread thread) {
        synchronized (lock) {
            ChatThread stored = threads.get(thread.id());
            if (stored == null) {
                return false;
            }
            threads.put(thread.id(), stored.withTitle(thread.title()).withModelId(thread.modelId())
                    .withSkill(thread.skill()).withStatus(thread.status()));
            return true;
        }
    }

    @Override
    public boolean deleteThread(String threadId) {
        synchronized (lock) {
            if (threads.remove(threadId) == null) {
                return false;
            }
            List<String> runIds = new ArrayList<>();
            runs.values().removeIf(run -> {
                if (run.threadId().equals(threadId)) {
                    runIds.add(run.id());
                    return true;
                }
                return false;
            });
            Set<String> messageIds = new HashSet<>(topLevelByThread.getOrDefault(threadId, List.of()));
            for (String runId : runIds) {
                messageIds.addAll(stepsByRun.getOrDefault(runId, List.of()));
                stepsByRun.remove(runId);
                eventsByRun.remove(runId);
                reservedSeqs.remove(runId);
                compactedRuns.remove(runId);
                inputsByRun.remove(runId);
                leases.remove(runId);
                hostActions.keySet().removeIf(key -> key.startsWith(runId + '\u0000'));
            }
            topLevelByThread.remove(threadId);
            approvals.removeIf(key -> key.startsWith(threadId + '\u0000'));
            for (String messageId : messageIds) {
                messages.remove(messageId);
                saveOrder.remove(messageId);
                variantsByParent.remove(messageId);
                feedback.keySet().removeIf(key -> key.startsWith(messageId + '\u0000'));
            }
            return true;
        }
    }

    @Override
    public void write(StoreBatch batch) {
        synchronized (lock) {
            checkFence(batch);
            checkOneActiveRunPerThread(batch);
            checkClientMessageIds(batch);
            for (ThreadTouch touch : batch.threadTouches()) {
                ChatThread thread = threads.get(touch.threadId());
                if (thread == null) {
                    continue;
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
            for (Run run : batch.runs()) {
                runs.put(run.id(), run);
            }
            for (Message message : batch.messages()) {
                saveMessage(message);
            }
            for (RunEvent event : batch.events()) {
                List<RunEvent> events = eventsByRun.computeIfAbsent(event.runId(), k -> new ArrayList<>());
                int at = indexAfter(events, event.seq() - 1);
                if (at == events.size() || events.get(at).seq() != event.seq()) {
                    events.add(at, event);
                }
            }
            for (PendingInput input : batch.inputs()) {
                inputsByRun.computeIfAbsent(input.runId(), k -> new LinkedHashMap<>())
                        .putIfAbsent(input.inputId(), input);
            }
            for (StoreBatch.SeqReservation reservation : batch.reservations()) {
                reservedSeqs.merge(reservation.runId(), reservation.upTo(), Math::max);
            }
            for (RunLease lease : batch.leases()) {
                if (runs.containsKey(lease.runId())) {
                    leases.put(lease.runId(), lease);
                }
            }
        }
    }

    private void checkFence(StoreBatch batch) {
        if (batch.fence() == null) {
            return;
        }
        Set<String> lost = new LinkedHashSet<>();
        for (String runId : batch.writtenRunIds()) {
            RunLease lease = leases.get(runId);
            if (lease != null && !lease.instanceId().equals(batch.fence())) {
                lost.add(runId);
            }
        }
        if (!lost.isEmpty()) {
            throw new LeaseLostException(lost);
        }
    }

    /** Refuses a batch that makes a run hold a thread another run holds (checked only on such a change). */
    private void checkOneActiveRunPerThread(StoreBatch batch) {
        Map<String, Run> after = new LinkedHashMap<>();
        for (Run run : batch.runs()) {
            after.put(run.id(), run);
        }
        for (Run run : after.values()) {
            Run stored = runs.get(run.id());
            if (!holdsThread(run) || (stored != null && holdsThread(stored))) {
                continue;
            }
            for (Run other : runs.values()) {
                Run otherAfter = after.getOrDefault(other.id(), other);
                if (!other.id().equals(run.id()) && other.threadId().equals(run.threadId()) && holdsThread(otherAfter)) {
                    throw ChatException.conflict("thread " + run.threadId() + " already has an active run");
                }
            }
            for (Run other : after.values()) {
                if (!other.id().equals(run.id()) && !runs.containsKey(other.id())
                        && other.threadId().equals(run.threadId()) && holdsThread(other)) {
                    throw ChatException.conflict("thread " + run.threadId() + " already has an active run");
                }
            }
        }
    }

    /** Refuses a user message whose client id another user message of its thread has. */
    private void checkClientMessageIds(StoreBatch batch) {
        Map<String, String> taken = new HashMap<>();
        for (Message message : batch.messages()) {
            if (message instanceof UserMessage user && user.clientMessageId() != null) {
                String key = user.threadId() + '\u0000' + user.clientMessageId();
                String other = taken.putIfAbsent(key, user.id());
                Optional<UserMessage> stored = userByClientId(user.threadId(), user.clientMessageId());
                if ((other != null && !other.equals(user.id()))
                        || stored.isPresent() && !stored.get().id().equals(user.id())) {
                    throw ChatException.conflict("thread " + user.threadId() + " already has a message with client id "
                            + user.clientMessageId());
                }
            }
        }
    }

    private Optional<UserMessage> userByClientId(String threadId, String clientMessageId) {
        for (String id : topLevelByThread.getOrDefault(threadId, List.of())) {
            if (messages.get(id) instanceof UserMessage user && clientMessageId.equals(user.clientMessageId())) {
                return Optional.of(user);
            }
        }
        return Optional.empty();
    }

    private static boolean holdsThread(Run run) {
        return run.status() == RunStatus.RUNNING || run.status() == RunStatus.WAITING_FOR_INPUT;
    }

    private void saveMessage(Message message) {
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

    @Override
    public List<Message> listBranch(String threadId, String leafId, @Nullable String beforeMessageId, int limit) {
        synchronized (lock) {
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
    }

    private @Nullable Message topLevelOf(String threadId, @Nullable String messageId) {
        Message message = messageId == null ? null : messages.get(messageId);
        return message != null && message.threadId().equals(threadId) && message.kind().isTopLevel() ? message : null;
    }

    private @Nullable Message parentOf(Message message) {
        return topLevelOf(message.threadId(), message.parentMessageId());
    }

    @Override
    public List<Message> findMessages(Collection<String> messageIds) {
        synchronized (lock) {
            return messageIds.stream().distinct().map(messages::get).filter(java.util.Objects::nonNull)
                    .sorted(Comparator.comparing(m -> saveOrder.get(m.id())))
                    .collect(java.util.stream.Collectors.toList());
        }
    }

    @Override
    public Map<String, List<String>> findUserSiblingIds(String threadId, Collection<String> userMessageIds) {
        synchronized (lock) {
            Map<String, List<String>> result = new LinkedHashMap<>();
            List<String> thread = topLevelByThread.getOrDefault(threadId, List.of());
            for (String id : userMessageIds) {
                if (!(topLevelOf(threadId, id) instanceof UserMessage user)) {
                    continue;
                }
                List<String> siblings = new ArrayList<>();
                for (String other : thread) {
                    if (messages.get(other) instanceof UserMessage candidate
                            && java.util.Objects.equals(candidate.parentMessageId(), user.parentMessageId())) {
                        siblings.add(other);
                    }
                }
                result.put(id, siblings);
            }
            return result;
        }
    }

    @Override
    public Optional<String> findNewestDescendant(String threadId, String messageId) {
        synchronized (lock) {
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

    @Override
    public Optional<UserMessage> findUserMessageByClientId(String threadId, String clientMessageId) {
        synchronized (lock) {
            return userByClientId(threadId, clientMessageId);
        }
    }

    @Override
    public List<Message> listTopLevelMessagesAfter(String threadId, @Nullable String afterMessageId, int limit) {
        synchronized (lock) {
            List<String> ids = topLevelByThread.getOrDefault(threadId, List.of());
            int start = afterMessageId == null ? 0 : ids.indexOf(afterMessageId) + 1;
            if (afterMessageId != null && start == 0) {
                return List.of();
            }
            List<Message> page = new ArrayList<>();
            for (String id : ids.subList(start, Math.min(ids.size(), start + limit))) {
                page.add(messages.get(id));
            }
            return page;
        }
    }

    @Override
    public List<ThreadSearchHit> searchThreads(String ownerId, SearchQuery query, int offset, int limit) {
        synchronized (lock) {
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
                for (String id : topLevelByThread.getOrDefault(thread.id(), List.of())) {
                    String text = InMemoryText.searchable(messages.get(id));
                    int score = InMemoryText.score(text, query);
                    total += score;
                    if (score > best) {
                        best = score;
                        snippet = InMemoryText.snippet(text, query);
                        from = id;
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
                    .collect(java.util.stream.Collectors.toList());
        }
    }

    @Override
    public List<Run> findRunsToCompact(Instant endedBefore, int limit) {
        synchronized (lock) {
            return runs.values().stream()
                    .filter(run -> run.status().isTerminal() && run.finishedAt() != null
                            && run.finishedAt().isBefore(endedBefore) && !compactedRuns.contains(run.id()))
                    .sorted(Comparator.comparing(Run::finishedAt))
                    .limit(limit)
                    .collect(java.util.stream.Collectors.toList());
        }
    }

    @Override
    public void compactRunEvents(String runId, List<RunEvent> kept, Instant at) {
        synchronized (lock) {
            if (!runs.containsKey(runId)) {
                return;
            }
            List<RunEvent> events = new ArrayList<>(kept);
            events.sort(Comparator.comparingLong(RunEvent::seq));
            eventsByRun.put(runId, events);
            compactedRuns.add(runId);
        }
    }

    @Override
    public Optional<Message> findMessage(String messageId) {
        synchronized (lock) {
            return Optional.ofNullable(messages.get(messageId));
        }
    }

    @Override
    public List<Message> listTopLevelMessages(String threadId, @Nullable String beforeMessageId, int limit) {
        synchronized (lock) {
            List<String> ids = topLevelByThread.getOrDefault(threadId, List.of());
            int end = ids.size();
            if (beforeMessageId != null) {
                end = ids.indexOf(beforeMessageId);
                if (end < 0) {
                    return List.of();
                }
            }
            int start = Math.max(0, end - limit);
            List<Message> page = new ArrayList<>(end - start);
            for (String id : ids.subList(start, end)) {
                page.add(messages.get(id));
            }
            return page;
        }
    }

    @Override
    public List<Message> listStepMessages(Collection<String> runIds) {
        synchronized (lock) {
            List<Message> steps = new ArrayList<>();
            for (String runId : runIds) {
                for (String id : stepsByRun.getOrDefault(runId, List.of())) {
                    steps.add(messages.get(id));
                }
            }
            return steps;
        }
    }

    @Override
    public Map<String, List<String>> findVariantIds(Collection<String> parentMessageIds) {
        synchronized (lock) {
            Map<String, List<String>> result = new LinkedHashMap<>();
            for (String parent : parentMessageIds) {
                List<String> ids = variantsByParent.get(parent);
                if (ids != null) {
                    result.put(parent, List.copyOf(ids));
                }
            }
            return result;
        }
    }

    @Override
    public Optional<Run> findRun(String runId) {
        synchronized (lock) {
            return Optional.ofNullable(runs.get(runId));
        }
    }

    @Override
    public List<Run> findRuns(Set<RunStatus> statuses) {
        synchronized (lock) {
            List<Run> result = new ArrayList<>();
            for (Run run : runs.values()) {
                if (statuses.contains(run.status())) {
                    result.add(run);
                }
            }
            return result;
        }
    }

    @Override
    public List<Run> findThreadRuns(String threadId, Set<RunStatus> statuses) {
        synchronized (lock) {
            List<Run> result = new ArrayList<>();
            for (Run run : runs.values()) {
                if (run.threadId().equals(threadId) && statuses.contains(run.status())) {
                    result.add(run);
                }
            }
            return result;
        }
    }

    @Override
    public List<RunEvent> readEvents(String runId, long afterSeq, int limit) {
        synchronized (lock) {
            List<RunEvent> events = eventsByRun.getOrDefault(runId, List.of());
            int from = indexAfter(events, afterSeq);
            int to = (int) Math.min(events.size(), (long) from + limit);
            return new ArrayList<>(events.subList(from, to));
        }
    }

    /** The index of the first event with seq above {@code seq}. */
    private static int indexAfter(List<RunEvent> events, long seq) {
        int low = 0;
        int high = events.size();
        while (low < high) {
            int mid = (low + high) >>> 1;
            if (events.get(mid).seq() <= seq) {
                low = mid + 1;
            } else {
                high = mid;
            }
        }
        return low;
    }

    @Override
    public long lastSeq(String runId) {
        synchronized (lock) {
            List<RunEvent> events = eventsByRun.get(runId);
            return events == null || events.isEmpty() ? 0 : events.get(events.size() - 1).seq();
        }
    }

    @Override
    public void reserveSeq(String runId, long upTo) {
        synchronized (lock) {
            reservedSeqs.merge(runId, upTo, Math::max);
        }
    }

    @Override
    public long reservedSeq(String runId) {
        synchronized (lock) {
            return reservedSeqs.getOrDefault(runId, 0L);
        }
    }

    @Override
    public Set<String> leaseRuns(String instanceId, Collection<String> runIds, Instant until) {
        synchronized (lock) {
            Set<String> held = new HashSet<>();
            for (String runId : runIds) {
                RunLease lease = leases.get(runId);
                if (runs.containsKey(runId) && (lease == null || lease.instanceId().equals(instanceId))) {
                    leases.put(runId, new RunLease(runId, instanceId, until));
                    held.add(runId);
                }
            }
            return held;
        }
    }

    @Override
    public boolean takeOverRun(String runId, String instanceId, Instant now, Instant until) {
        synchronized (lock) {
            RunLease lease = leases.get(runId);
            Run run = runs.get(runId);
            if (run == null || run.status().isTerminal() || (lease != null && !lease.until().isBefore(now))) {
                return false;
            }
            leases.put(runId, new RunLease(runId, instanceId, until));
            return true;
        }
    }

    @Override
    public List<Run> findRunsWithExpiredLease(Instant now) {
        synchronized (lock) {
            List<Run> expired = new ArrayList<>();
            for (Run run : runs.values()) {
                RunLease lease = leases.get(run.id());
                if (!run.status().isTerminal() && (lease == null || lease.until().isBefore(now))) {
                    expired.add(run);
                }
            }
            return expired;
        }
    }

    @Override
    public Optional<RunLease> findLease(String runId) {
        synchronized (lock) {
            return Optional.ofNullable(leases.get(runId));
        }
    }

    @Override
    public Optional<PendingInput> findInput(String runId, String inputId) {
        synchronized (lock) {
            return Optional.ofNullable(inputsByRun.getOrDefault(runId, Map.of()).get(inputId));
        }
    }

    @Override
    public List<PendingInput> listPendingInputs(String runId) {
        synchronized (lock) {
            List<PendingInput> pending = new ArrayList<>();
            for (PendingInput input : inputsByRun.getOrDefault(runId, Map.of()).values()) {
                if (input.state() == InputState.PENDING) {
                    pending.add(input);
                }
            }
            return pending;
        }
    }

    @Override
    public AnswerOutcome answerInput(String runId, String inputId, InputAnswer answer, Instant at) {
        synchronized (lock) {
            Map<String, PendingInput> inputs = inputsByRun.get(runId);
            PendingInput input = inputs == null ? null : inputs.get(inputId);
            if (input == null) {
                return AnswerOutcome.NOT_FOUND;
            }
            switch (input.state()) {
                case PENDING:
                    inputs.put(inputId, input.resolved(InputState.ANSWERED, answer, at));
                    return AnswerOutcome.ACCEPTED;
                case ANSWERED:
                    return answer.equals(input.answer()) ? AnswerOutcome.REPLAYED : AnswerOutcome.CONFLICT;
                default:
                    return AnswerOutcome.CONFLICT;
            }
        }
    }

    @Override
    public void reopenInput(String runId, String inputId) {
        synchronized (lock) {
            Map<String, PendingInput> inputs = inputsByRun.get(runId);
            PendingInput input = inputs == null ? null : inputs.get(inputId);
            if (input != null && input.state() == InputState.ANSWERED) {
                inputs.put(inputId, input.resolved(InputState.PENDING, null, null));
            }
        }
    }

    @Override
    public boolean closeInput(String runId, String inputId, InputState state, Instant at) {
        if (state != InputState.EXPIRED && state != InputState.CANCELLED) {
            throw new IllegalArgumentException("an input is closed EXPIRED or CANCELLED, not " + state);
        }
        synchronized (lock) {
            Map<String, PendingInput> inputs = inputsByRun.get(runId);
            PendingInput input = inputs == null ? null : inputs.get(inputId);
            if (input == null || input.state() != InputState.PENDING) {
                return false;
            }
            inputs.put(inputId, input.resolved(state, null, at));
            return true;
        }
    }

    @Override
    public void cancelPendingInputs(String runId, Instant at) {
        synchronized (lock) {
            Map<String, PendingInput> inputs = inputsByRun.get(runId);
            if (inputs != null) {
                inputs.replaceAll((id, input) -> input.state() == InputState.PENDING
                        ? input.resolved(InputState.CANCELLED, null, at) : input);
            }
        }
    }

    @Override
    public void rememberApproval(String threadId, String toolName, Instant at) {
        synchronized (lock) {
            if (threads.containsKey(threadId)) {
                approvals.add(threadId + '\u0000' + toolName);
            }
        }
    }

    @Override
    public boolean isApprovedForThread(String threadId, String toolName) {
        synchronized (lock) {
            return approvals.contains(threadId + '\u0000' + toolName);
        }
    }

    @Override
    public void saveFeedback(Feedback rating) {
        synchronized (lock) {
            feedback.put(rating.messageId() + '\u0000' + rating.ownerId(), rating);
        }
    }

    @Override
    public Optional<Feedback> findFeedback(String messageId, String ownerId) {
        synchronized (lock) {
            return Optional.ofNullable(feedback.get(messageId + '\u0000' + ownerId));
        }
    }

    @Override
    public List<Feedback> listFeedback(Collection<String> messageIds) {
        synchronized (lock) {
            Set<String> wanted = new HashSet<>(messageIds);
            return feedback.values().stream().filter(f -> wanted.contains(f.messageId()))
                    .collect(java.util.stream.Collectors.toList());
        }
    }

    @Override
    public HostActionRecord claimHostAction(String runId, String executionId, String name, String arguments,
            Instant at) {
        synchronized (lock) {
            String key = runId + '\u0000' + executionId;
            HostActionRecord existing = hostActions.get(key);
            if (existing != null) {
                return existing;
            }
            HostActionRecord claimed = new HostActionRecord(runId, executionId, name, arguments, true, null, false, at,
                    null);
            hostActions.put(key, new HostActionRecord(runId, executionId, name, arguments, false, null, false, at, null));
            return claimed;
        }
    }

    @Override
    public void completeHostAction(String runId, String executionId, String result, boolean error, Instant at) {
        synchronized (lock) {
            String key = runId + '\u0000' + executionId;
            HostActionRecord existing = hostActions.get(key);
            if (existing != null && !existing.isCompleted()) {
                hostActions.put(key, new HostActionRecord(runId, executionId, existing.name(), existing.arguments(),
                        false, result, error, existing.claimedAt(), at));
            }
        }
    }
}
