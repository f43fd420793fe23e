package dev.parley.simulation;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageKind;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.outbox.OutboxEntry;
import dev.parley.chat.outbox.OutboxEventType;
import dev.parley.chat.outbox.OutboxStore;
import dev.parley.chat.reduce.RunReducer;
import dev.parley.chat.store.ChatStore;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The engine's promises, checked against a world: the safety ones after every step, while runs go on; all
 * of them at the end, once the world is quiet. Each is named as in docs/RELIABILITY.md. A broken one is
 * recorded in the world ({@link World#violated}). The checks read the store without faults.
 */
final class Checks {
    private static final Set<RunStatus> HOLDING = EnumSet.of(RunStatus.RUNNING, RunStatus.WAITING_FOR_INPUT);
    private static final Set<RunStatus> LIVE = EnumSet.of(RunStatus.QUEUED, RunStatus.RUNNING,
            RunStatus.WAITING_FOR_INPUT);

    private final World world;
    private final ChatStore store;
    private final FileChecks files;
    private int sendsChecked;
    private long checks;

    Checks(World world) {
        this.world = world;
        this.store = world.store;
        this.files = new FileChecks(world);
    }

    long count() {
        return checks + files.count();
    }

    /** The promises that hold at every moment, even while runs go on. */
    void afterStep() {
        oneActiveRunPerThread();
        answersReachTheRuntimeAtMostOnce();
        hostActionsRunAtMostOnce();
        deletionIsFinal();
        deletedConversationsAreForgotten();
        newMessagesFollowTheBranch();
        anotherOwnersIdsAreNotFound();
        files.afterStep();
    }

    /** Every promise, once no run is active any more. */
    void atTheEnd() {
        afterStep();
        everyStartedRunEndedOnce();
        aSucceededRunHoldsWhatTheRuntimeSentOnce();
        noInputPendingOnAnEndedRun();
        subscribersSawEachEventOnceInOrder();
        storedMessagesAreTheFoldOfStoredEvents();
        runtimesGotExactlyTheBranchBeforeTheMessage();
        theOutboxHoldsEachEndAndRequestOnce();
        suggestionsFollowOnlySucceededAnswersOfTheirOwn();
        files.atTheEnd();
    }

    private void violated(String invariant, String detail) {
        world.violated(invariant, detail);
    }

    // ------------------------------------------------------------------ after every step

    private void oneActiveRunPerThread() {
        checks++;
        Map<String, List<String>> holding = new HashMap<>();
        for (Run run : store.findRuns(HOLDING)) {
            holding.computeIfAbsent(run.threadId(), k -> new ArrayList<>()).add(run.id());
        }
        holding.forEach((thread, runs) -> {
            if (runs.size() > 1) {
                violated("at most one active run per thread", "thread " + thread + " has " + runs);
            }
        });
    }

    private void answersReachTheRuntimeAtMostOnce() {
        checks++;
        world.runtime.deliveries().forEach((input, count) -> {
            if (count.get() > 1) {
                violated("an answer reaches the runtime at most once", input + " reached it " + count.get() + " times"
                        + world.runtime.duplicateOf(input));
            }
        });
    }

    private void hostActionsRunAtMostOnce() {
        checks++;
        world.handlerRuns.forEach((execution, count) -> {
            if (count.get() > 1) {
                violated("a host action's handler runs at most once per execution", execution + " ran " + count.get()
                        + " times");
            }
        });
    }

    /**
     * Deleted threads leave no row: what they held when deleted is gone, and no row stored since belongs to a
     * thread that is gone or to an earlier thread with the same id (a row written back after the delete).
     */
    private void deletionIsFinal() {
        checks++;
        for (World.ThreadRef gone : world.deleted) {
            Optional<ChatThread> now = store.findThread(gone.id());
            // the id is free once deleted: another owner may open a new thread under it at the same virtual
            // instant (time moves only when the simulation moves it), which is not the deleted one coming back
            if (now.isPresent() && now.get().ownerId().equals(gone.owner())
                    && now.get().createdAt().equals(gone.createdAt())) {
                violated("deleted data stays deleted", "thread " + gone.id() + " is still there");
            }
        }
        Map<String, ChatThread> threads = new HashMap<>();
        world.storedRuns.forEach((runId, threadId) -> store.findRun(runId).ifPresent(run -> {
            ChatThread thread = threads.computeIfAbsent(threadId, id -> store.findThread(id).orElse(null));
            if (thread == null) {
                violated("deleted data stays deleted", "run " + runId + " is stored, its thread " + threadId + " is gone");
            } else if (run.createdAt().isBefore(thread.createdAt()) || !run.ownerId().equals(thread.ownerId())) {
                violated("deleted data stays deleted", "run " + runId + " of an earlier thread " + threadId
                        + " came back into the thread that now has the id");
            }
        }));
        List<Message> messages = store.findMessages(world.storedMessages.keySet());
        for (Message message : messages) {
            ChatThread thread = threads.computeIfAbsent(message.threadId(), id -> store.findThread(id).orElse(null));
            if (thread == null) {
                violated("deleted data stays deleted", "message " + message.id() + " is stored, its thread "
                        + message.threadId() + " is gone");
            } else if (message.createdAt().isBefore(thread.createdAt())) {
                violated("deleted data stays deleted", "message " + message.id() + " of an earlier thread "
                        + message.threadId() + " came back");
            }
        }
    }

    /** The runtime was told to forget each deleted thread's conversation (its files, its remembered approvals). */
    private void deletedConversationsAreForgotten() {
        checks++;
        for (World.ThreadRef gone : world.deleted) {
            String key = dev.parley.chat.runtime.RunRequest.conversationKey(gone.id(), gone.createdAt());
            if (!world.runtime.forgottenConversations().contains(key)) {
                violated("deleted data stays deleted", "the runtime was not told to forget thread " + gone.id()
                        + " (" + key + ")");
            }
        }
    }

    /**
     * A new message (not an edit) answers the active branch's last message: no other message shares its parent,
     * unless a roll-back or an undo made that parent the branch's end again.
     */
    private void newMessagesFollowTheBranch() {
        checks++;
        List<World.RunRef> runs = world.runs;
        Map<String, String> sentByParent = new HashMap<>();
        for (int i = 0; i < runs.size(); i++) {
            World.RunRef run = runs.get(i);
            if (!run.sent() || run.userMessageId() == null) {
                continue;
            }
            Optional<Message> user = store.findMessage(run.userMessageId());
            if (user.isEmpty()) {
                continue;
            }
            String parent = run.threadId() + "/" + user.get().parentMessageId();
            String earlier = sentByParent.putIfAbsent(parent, run.userMessageId());
            if (earlier != null && i >= sendsChecked && !world.movedBackTo.contains(parent)) {
                violated("a new message follows the active branch's last message", "messages " + earlier + " and "
                        + run.userMessageId() + " were both sent after " + parent + ": one dropped off the branch");
            }
        }
        sendsChecked = runs.size();
    }

    private void anotherOwnersIdsAreNotFound() {
        checks++;
        World.RunRef run = world.run((int) (checks * 7919));
        if (run == null || world.instances() == 0) {
            return;
        }
        try {
            world.engine(0).state(world.otherOwner(run.owner()), run.runId());
            violated("another owner's ids are NOT_FOUND", "run " + run.runId() + " showed its state to another owner");
        } catch (ChatException e) {
            if (e.code() != ErrorCode.NOT_FOUND && e.code() != ErrorCode.STORE_FAILURE) {
                violated("another owner's ids are NOT_FOUND", "run " + run.runId() + ": " + e.code());
            }
        }
    }

    // ------------------------------------------------------------------ at the end

    /** The runs whose rows the store holds (their thread exists). */
    private List<Run> storedRuns() {
        List<Run> runs = new ArrayList<>();
        world.storedRuns.keySet().forEach(id -> store.findRun(id).ifPresent(runs::add));
        return runs;
    }

    /**
     * Nothing lost, nothing twice, also across restarts and take-overs that re-attached to a streaming run: the
     * text and thinking a succeeded run's stored log holds are exactly what the runtime sent for it.
     */
    private void aSucceededRunHoldsWhatTheRuntimeSentOnce() {
        checks++;
        for (Run run : storedRuns()) {
            if (run.status() != RunStatus.SUCCEEDED) {
                continue;
            }
            List<AgentStreamEvent> sent = world.runtime.sent(run.id());
            List<AgentStreamEvent> logged = store.readEvents(run.id(), 0, 1_000_000).stream().map(RunEvent::event).toList();
            boolean compacted = logged.stream().noneMatch(e -> e instanceof AgentStreamEvent.TextDelta
                    || e instanceof AgentStreamEvent.ThinkingDelta);
            if (!compacted && !streamedText(sent).equals(streamedText(logged))) {
                violated("nothing the runtime sent is lost or stored twice", "run " + run.id() + " sent \""
                        + streamedText(sent) + "\", its log holds \"" + streamedText(logged) + "\" (sent "
                        + sent.stream().map(AgentStreamEvent::type).toList() + ", logged "
                        + logged.stream().map(e -> e instanceof AgentStreamEvent.StatusUpdate status
                                ? "status(" + status.text() + ")" : e.type()).toList() + ")");
            }
            String answer = sent.stream().filter(AgentStreamEvent.TextDelta.class::isInstance)
                    .map(e -> ((AgentStreamEvent.TextDelta) e).delta()).collect(java.util.stream.Collectors.joining());
            store.findMessage(run.assistantMessageId()).filter(m -> m instanceof AssistantMessage a
                    && !a.text().equals(answer)).ifPresent(m -> violated("nothing the runtime sent is lost or stored "
                            + "twice", "run " + run.id() + " sent the answer \"" + answer + "\", its stored answer is \""
                            + ((AssistantMessage) m).text() + "\""));
        }
    }

    private static String streamedText(List<AgentStreamEvent> events) {
        StringBuilder text = new StringBuilder();
        for (AgentStreamEvent event : events) {
            if (event instanceof AgentStreamEvent.TextDelta delta) {
                text.append(delta.delta());
            } else if (event instanceof AgentStreamEvent.ThinkingDelta thinking) {
                text.append('[').append(thinking.delta()).append(']');
            }
        }
        return text.toString();
    }

    private void everyStartedRunEndedOnce() {
        checks++;
        for (Run run : storedRuns()) {
            if (!run.status().isTerminal()) {
                violated("every started run ends", "run " + run.id() + " is still " + run.status());
                continue;
            }
            List<RunEvent> events = store.readEvents(run.id(), 0, 1_000_000);
            long ends = events.stream().filter(e -> e.event().isTerminal()).count();
            if (ends != 1 || !events.get(events.size() - 1).event().isTerminal()) {
                violated("every started run ends", "run " + run.id() + " has " + ends + " terminal events"
                        + (ends > 0 ? ", the last event " + events.get(events.size() - 1).type() : ""));
            }
            long previous = 0;
            for (RunEvent event : events) {
                if (event.seq() <= previous) {
                    violated("a run's events are numbered without duplicate", "run " + run.id() + ": seq " + event.seq()
                            + " after " + previous);
                    break;
                }
                previous = event.seq();
            }
        }
        for (ChatThread thread : threadsStillThere()) {
            if (!store.findThreadRuns(thread.id(), LIVE).isEmpty()) {
                violated("every started run ends", "thread " + thread.id() + " still has a live run");
            }
        }
    }

    private List<ChatThread> threadsStillThere() {
        List<ChatThread> threads = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (World.ThreadRef ref : world.threads) {
            if (seen.add(ref.id())) {
                store.findThread(ref.id()).ifPresent(threads::add);
            }
        }
        return threads;
    }

    /**
     * The outbox (webhooks) holds, for every stored run that ended, exactly one entry of its end, of its status,
     * and for every input request its log still shows, exactly one entry; none for a run no longer stored (its
     * thread deleted or erased) and none for an input the store does not hold — whichever store calls failed,
     * or took effect though they failed, on the way.
     */
    private void theOutboxHoldsEachEndAndRequestOnce() {
        checks++;
        if (!(store instanceof OutboxStore outbox)) {
            return;
        }
        java.time.Instant far = java.time.Instant.parse("2999-01-01T00:00:00Z");
        List<OutboxEntry> entries = outbox.claimOutbox("checks", far, far.plusSeconds(60), 1_000_000);
        java.util.Map<String, List<OutboxEntry>> byRun = new java.util.HashMap<>();
        for (OutboxEntry entry : entries) {
            byRun.computeIfAbsent(entry.runId(), id -> new ArrayList<>()).add(entry);
            if (store.findRun(entry.runId()).isEmpty()) {
                violated("erased data leaves no row", "an outbox entry (" + entry.type() + ") of run " + entry.runId()
                        + ", which is not stored");
            } else if (entry.inputId() != null && store.findInput(entry.runId(), entry.inputId()).isEmpty()) {
                violated("the outbox invents nothing", "an input.requested entry of run " + entry.runId()
                        + " for input " + entry.inputId() + ", which is not stored");
            }
        }
        for (Run run : storedRuns()) {
            List<OutboxEntry> mine = byRun.getOrDefault(run.id(), List.of());
            List<String> ends = mine.stream().filter(e -> e.inputId() == null).map(e -> e.type().wireName()).toList();
            if (run.status().isTerminal() && !ends.equals(List.of(OutboxEventType.ofEnd(run.status()).wireName()))) {
                violated("the outbox holds each run's end once", "run " + run.id() + " ended " + run.status()
                        + "; its end entries: " + ends);
            }
            Set<String> asked = new HashSet<>();
            for (RunEvent event : store.readEvents(run.id(), 0, 1_000_000)) {
                if (event.event() instanceof AgentStreamEvent.InputRequested requested
                        && store.findInput(run.id(), requested.inputId()).isPresent()) {
                    asked.add(requested.inputId()); // an input row the store refused was left out, with its entry
                }
            }
            for (String inputId : asked) {
                long count = mine.stream().filter(e -> inputId.equals(e.inputId())).count();
                if (count != 1) {
                    violated("the outbox holds each input request once", "run " + run.id() + " asked for input "
                            + inputId + "; the outbox holds " + count + " entries of it");
                }
            }
        }
    }

    /**
     * Follow-up suggestions (made after a run, with failures in the provider) are stored only on the answer of a
     * run that SUCCEEDED, and are that answer's own.
     */
    private void suggestionsFollowOnlySucceededAnswersOfTheirOwn() {
        checks++;
        for (Run run : storedRuns()) {
            Optional<Message> answer = store.findMessage(run.assistantMessageId());
            if (answer.isEmpty() || !(answer.get() instanceof AssistantMessage assistant)
                    || assistant.suggestions() == null) {
                continue;
            }
            if (run.status() != RunStatus.SUCCEEDED) {
                violated("suggestions follow only answers that succeeded", "run " + run.id() + " ended "
                        + run.status() + " and its answer has suggestions " + assistant.suggestions().prompts());
            } else if (!assistant.suggestions().prompts().equals(List.of(World.suggestionFor(assistant.id())))) {
                violated("an answer's suggestions are its own", "answer " + assistant.id() + " has suggestions "
                        + assistant.suggestions().prompts());
            }
        }
    }

    private void noInputPendingOnAnEndedRun() {
        checks++;
        for (Run run : storedRuns()) {
            if (run.status().isTerminal() && !store.listPendingInputs(run.id()).isEmpty()) {
                violated("no input stays pending on an ended run", "run " + run.id() + " (" + run.status()
                        + ", ended " + run.finishedAt() + ") has pending " + store.listPendingInputs(run.id())
                        + "; deliveries " + world.runtime.deliveries().entrySet().stream()
                                .filter(e -> e.getKey().startsWith(run.id())).toList()
                        + "; its last events " + lastEvents(run.id()));
            }
        }
    }

    /**
     * Every subscriber saw the run's events after its cursor once each, in order, as the store has them (a
     * compacted or deleted run's excepted); one that completed saw the end.
     */
    private void subscribersSawEachEventOnceInOrder() {
        checks++;
        for (World.Subscription subscription : world.subscriptions) {
            List<RunEvent> got = subscription.subscriber().received;
            long previous = subscription.after();
            for (RunEvent event : got) {
                if (event.seq() <= previous) {
                    violated("every subscriber sees each event once, in order", "a subscriber of run "
                            + subscription.runId() + " after " + subscription.after() + " got seq " + event.seq()
                            + " after " + previous);
                    break;
                }
                previous = event.seq();
            }
            Optional<Run> run = store.findRun(subscription.runId());
            if (run.isEmpty() || compacted(store, subscription.runId())) {
                continue;
            }
            Map<Long, RunEvent> stored = new HashMap<>();
            store.readEvents(subscription.runId(), subscription.after(), 1_000_000).forEach(e -> stored.put(e.seq(), e));
            for (RunEvent event : got) {
                RunEvent kept = stored.get(event.seq());
                if (kept != null && !kept.event().equals(event.event())) {
                    violated("every subscriber sees each event once, in order", "run " + subscription.runId()
                            + " seq " + event.seq() + ": the subscriber got " + event.type() + ", the store has "
                            + kept.type());
                }
            }
            if (subscription.subscriber().completed()) {
                boolean endedBefore = got.isEmpty() && stored.isEmpty();
                if (!endedBefore && (got.isEmpty() || !got.get(got.size() - 1).event().isTerminal())) {
                    violated("every subscriber sees each event once, in order", "a subscriber of run "
                            + subscription.runId() + " completed without the run's end");
                }
                Set<Long> seen = new HashSet<>();
                got.forEach(e -> seen.add(e.seq()));
                for (Long seq : stored.keySet()) {
                    if (!seen.contains(seq)) {
                        violated("every subscriber sees each event once, in order", "a subscriber of run "
                                + subscription.runId() + " after " + subscription.after() + " missed stored seq " + seq);
                        break;
                    }
                }
            }
        }
    }

    private void storedMessagesAreTheFoldOfStoredEvents() {
        checks++;
        for (Run run : storedRuns()) {
            if (!run.status().isTerminal() || compacted(store, run.id())
                    || (run.error() != null && run.error().code().equals("STORE_FAILURE"))) {
                continue;
            }
            RunReducer reducer = new RunReducer();
            store.readEvents(run.id(), 0, 1_000_000).forEach(reducer::apply);
            List<Message> stored = new ArrayList<>();
            if (run.userMessageId() != null) {
                store.findMessage(run.userMessageId()).ifPresent(stored::add);
            }
            // follow-up suggestions are stored on the answer after its run, outside its event log
            store.findMessage(run.assistantMessageId()).map(Checks::withoutSuggestions).ifPresent(stored::add);
            stored.addAll(store.listStepMessagesAfter(run.id(), null, 1_000));
            if (!reducer.messages().equals(stored)) {
                violated("the stored messages are the fold of the stored events", "run " + run.id() + " ("
                        + run.status() + "): folded " + describe(reducer.messages()) + " but stored " + describe(stored)
                        + "; its last events " + lastEvents(run.id()));
            }
        }
    }

    private static Message withoutSuggestions(Message message) {
        return message instanceof AssistantMessage a && a.suggestions() != null
                ? new AssistantMessage(a.id(), a.threadId(), a.runId(), a.parentMessageId(), a.status(), a.createdAt(),
                        a.text(), a.error(), a.usage(), a.truncated(), null)
                : message;
    }

    private List<String> lastEvents(String runId) {
        List<RunEvent> events = store.readEvents(runId, 0, 1_000_000);
        return events.subList(Math.max(0, events.size() - 6), events.size()).stream()
                .map(e -> e.seq() + ":" + e.type() + "@" + e.timestamp()).toList();
    }

    private static String describe(List<Message> messages) {
        return messages.stream().map(m -> m.kind() + ":" + m.status() + ":" + m.id()).toList().toString();
    }

    /** The history a runtime got is exactly the active branch before the run's question; a regeneration continues no session. */
    private void runtimesGotExactlyTheBranchBeforeTheMessage() {
        checks++;
        for (SimRuntime.Received received : world.runtime.received()) {
            String threadId = received.request().threadId();
            if (store.findThread(threadId).isEmpty()) {
                continue;
            }
            Optional<Message> answer = store.findMessage(received.request().assistantMessageId());
            Optional<Message> question = answer.map(Message::parentMessageId).flatMap(store::findMessage);
            if (answer.isEmpty() || question.isEmpty()) {
                continue;
            }
            String before = question.get().parentMessageId();
            List<String> branch = before == null ? List.of() : store.listBranch(threadId, before, null, 1_000)
                    .stream().filter(m -> m.kind().isTopLevel()).map(Message::id).toList();
            List<String> given = received.historyIds();
            if (!branch.subList(Math.max(0, branch.size() - given.size()), branch.size()).equals(given)
                    || (given.size() < branch.size() && given.size() < 40)) {
                violated("the runtime gets exactly the active branch before the message", "run "
                        + received.request().runId() + " got " + given + ", the branch before its question is " + branch);
            }
            if (received.retry() && received.request().runtimeSessionId() != null) {
                violated("the runtime gets exactly the active branch before the message", "regeneration "
                        + received.request().runId() + " continued session " + received.request().runtimeSessionId()
                        + ", which holds the answer it replaces");
            }
        }
    }

    /** Messages of this kind count as a thread's turns. */
    static boolean topLevel(Message message) {
        return message.kind() == MessageKind.USER || message.kind() == MessageKind.ASSISTANT;
    }

    /** How many times each input reached the runtime, for the figures. */
    static int delivered(Map<String, AtomicInteger> deliveries) {
        return deliveries.values().stream().mapToInt(AtomicInteger::get).sum();
    }

    /** True if the run's stored log was compacted (its events after the start are a summary). */
    static boolean compacted(ChatStore store, String runId) {
        return store.readEvents(runId, 0, 4).stream().anyMatch(e -> e.event() instanceof AgentStreamEvent.StatusUpdate status
                && status.messageId().endsWith(":retention"));
    }
}
