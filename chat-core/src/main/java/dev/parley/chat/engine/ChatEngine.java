package dev.parley.chat.engine;

import dev.parley.chat.ChatException;
import dev.parley.chat.cluster.RunCoordinator;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.engine.internal.EngineContext;
import dev.parley.chat.engine.internal.InputChecks;
import dev.parley.chat.engine.internal.RunManager;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.ClientToolAnswer;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Feedback;
import dev.parley.chat.model.FeedbackRating;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageKind;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.ModelOption;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.runtime.SkillOption;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.ThreadCursor;
import dev.parley.chat.store.ThreadTouch;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The agent-chat engine: threads, runs, a replayable event log, human in the loop, stop, regenerate,
 * host actions and feedback, over any {@link RuntimeAdapter} and any {@link ChatStore}. It needs no HTTP,
 * SQL or Spring. Build one with {@link #builder()}, share it, {@link #close()} it on shutdown.
 *
 * <h2>A run's life</h2>
 * <ol>
 *   <li>{@link #startRun} stores the user message and an IN_PROGRESS assistant placeholder and returns
 *       the run id at once. The run is RUNNING, or QUEUED when the thread is busy and the
 *       {@link DoubleTexting} strategy is ENQUEUE or INTERRUPT (REJECT, the default, refuses with
 *       CONFLICT).</li>
 *   <li>On a background thread the engine logs {@code run_started} (seq 1) and the first messages, then
 *       subscribes to the runtime's stream. Every event is numbered (seq 1, 2, 3 …), folded into messages
 *       by the {@link dev.parley.chat.reduce.RunReducer}, kept in memory for live subscribers and stored
 *       in batches.</li>
 *   <li>A pending input — a clarify question, an approval, a tool the person's browser runs — makes the
 *       run WAITING_FOR_INPUT; it is stored before anyone sees it. {@link #answer} delivers the answer
 *       once and the run goes on. A host action whose {@link HostActionApproval} asks for it waits for the
 *       person's approval before its handler runs; a denial goes back to the runtime as an error result.
 *       An input whose deadline passes is EXPIRED and its asker told.</li>
 *   <li>The run ends SUCCEEDED, FAILED (with the reason: an error event, an exception, a failed stream,
 *       a stream that ends without a final event), CANCELLED ({@link #cancel}; the partial answer is
 *       kept) or INTERRUPTED (the host stopped). The end is stored before it is shown; the thread is free
 *       for the next run.</li>
 * </ol>
 * Subscribers ({@link #subscribe}) come and go freely: leaving never affects a run. After a restart, a
 * new engine on the same store marks the runs that were RUNNING as INTERRUPTED, re-attaches to runs
 * waiting for an answer when the runtime can ({@link Capability#REATTACH}), and restarts QUEUED runs.
 * Queued runs of a thread start in the order they arrived.
 *
 * <h2>Every started run ends</h2>
 * A run that started — its {@code run_started} is logged — reaches exactly one terminal event and frees its
 * thread, whatever throws: the store (a read at launch, a seq reservation, a batch it refuses, a
 * host-action record), the executor (a refused launch ends the run FAILED after its start), the runtime
 * or the host's {@link EngineListener}. The end is stored as soon as the store takes writes; until then
 * the thread refuses new messages with CONFLICT (the store still holds the run as active). A row the store
 * keeps refusing is left out — an event is replaced by a status event saying so — and its run fails with
 * STORE_FAILURE; every other run's work is stored. A run recovered after a restart whose reads fail is
 * tried again shortly. At most one run per thread is active, also across host instances (the store
 * enforces it). {@link #close()} leaves queued runs queued for the next engine.
 *
 * <h2>Callers</h2>
 * Every call names its caller ({@code ownerId}); another owner's thread, run or message is
 * {@code NOT_FOUND}. Bad input is {@code INVALID_INPUT} and changes nothing. All methods are thread-safe
 * and return promptly: the agent's work runs on the engine's threads. Errors are {@link ChatException}s.
 */
public final class ChatEngine implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(ChatEngine.class);
    private static final int MAX_FIELD_LENGTH = 200;
    private static final Set<RunStatus> LIVE = Set.of(RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.WAITING_FOR_INPUT);

    private final EngineContext ctx;
    private final RunManager runs;
    private final ChatStore store;
    private final RuntimeAdapter runtime;
    private final EngineLimits limits;
    private final DoubleTexting doubleTexting;
    private final List<ExecutorService> ownedExecutors;
    private volatile boolean closed;

    private ChatEngine(Builder b) {
        this.store = Objects.requireNonNull(b.store, "store");
        this.runtime = Objects.requireNonNull(b.runtime, "runtime");
        this.limits = b.limits;
        this.doubleTexting = b.doubleTexting;
        this.ownedExecutors = new ArrayList<>();
        ExecutorService work = b.executor;
        if (work == null) {
            work = Executors.newCachedThreadPool(daemon("parley-work"));
            ownedExecutors.add(work);
        }
        ExecutorService delivery = Executors.newFixedThreadPool(b.deliveryThreads, daemon("parley-delivery"));
        ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(1, daemon("parley-timer"));
        timers.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
        timers.setRemoveOnCancelPolicy(true);
        ownedExecutors.add(delivery);
        ownedExecutors.add(timers);
        if (!b.hostActions.isEmpty() && !runtime.capabilities().contains(Capability.HOST_TOOLS)) {
            log.warn("{} host action(s) registered, but the runtime cannot call host actions; they are not offered",
                    b.hostActions.size());
        }
        this.ctx = new EngineContext(store, runtime, b.clock, limits, work, delivery, timers, b.listener,
                b.hostActions, b.coordinator, b.leaseTimeout, b.controlTimeout);
        this.runs = new RunManager(ctx);
        runs.recover();
        runs.startCoordination();
    }

    public static Builder builder() {
        return new Builder();
    }

    // ================================================================== threads

    /** Creates a thread for the caller. */
    public ChatThread createThread(String ownerId, NewThread request) {
        requireOwner(ownerId);
        String title = request.title() == null ? null : checkTitle(request.title());
        checkOptionalField(request.modelId(), "modelId");
        checkOptionalField(request.skill(), "skill");
        Instant now = ctx.now();
        ChatThread thread = new ChatThread(newId(), ownerId, title, null, request.modelId(), request.skill(),
                ThreadStatus.ACTIVE, now, now);
        store.createThread(thread);
        return thread;
    }

    /**
     * A page of the caller's threads, newest activity first, starting after {@code cursor} (a
     * {@link ThreadPage#nextCursor()} this engine gave out; null for the first page). Paging is stable while
     * threads move: a thread that gets new activity moves to the front and is not listed twice.
     *
     * @throws ChatException INVALID_INPUT for a cursor this engine did not give out or a {@code limit} not
     *     between 1 and the maximum page size
     */
    public ThreadPage listThreads(String ownerId, @Nullable String cursor, int limit) {
        requireOwner(ownerId);
        ThreadCursor after = cursor == null ? null : ThreadPage.decode(cursor);
        checkLimit(limit);
        List<ChatThread> threads = store.listThreads(ownerId, after, limit + 1);
        if (threads.size() <= limit) {
            return new ThreadPage(threads, null);
        }
        ChatThread last = threads.get(limit - 1);
        return new ThreadPage(threads.subList(0, limit),
                ThreadPage.encode(new ThreadCursor(last.lastMessageAt(), last.id())));
    }

    /** The first page of the caller's threads. */
    public List<ChatThread> listThreads(String ownerId) {
        return listThreads(ownerId, null, limits.defaultPageSize()).threads();
    }

    /**
     * A thread with its newest {@code limit} user and assistant messages before the message {@code before}
     * (the newest ones when null), each answer with its steps and its variant position. A run still going
     * on in this process shows its live messages.
     */
    public ThreadView getThread(String ownerId, String threadId, @Nullable String before, int limit) {
        ChatThread thread = ownedThread(ownerId, threadId);
        checkLimit(limit);
        if (before != null) {
            Message cursor = store.findMessage(before).orElse(null);
            if (cursor == null || !cursor.threadId().equals(threadId) || !cursor.kind().isTopLevel()) {
                throw ChatException.invalidInput("before must be the id of a user or assistant message of this thread");
            }
        }
        List<Message> top = store.listTopLevelMessages(threadId, before, limit + 1);
        String olderCursor = null;
        if (top.size() > limit) {
            top = top.subList(1, top.size());
            olderCursor = top.get(0).id();
        }
        Map<String, List<Message>> stepsByRun = new HashMap<>();
        Map<String, Message> liveTop = new HashMap<>();
        List<String> storedRuns = new ArrayList<>();
        Set<String> parents = new LinkedHashSet<>();
        for (Message message : top) {
            if (message.kind() != MessageKind.ASSISTANT) {
                continue;
            }
            if (message.parentMessageId() != null) {
                parents.add(message.parentMessageId());
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
            stepsByRun.put(message.runId(), steps);
        }
        for (Message step : store.listStepMessages(storedRuns)) {
            stepsByRun.computeIfAbsent(step.runId(), k -> new ArrayList<>()).add(step);
        }
        List<Message> page = new ArrayList<>();
        for (Message message : top) {
            page.add(liveTop.getOrDefault(message.id(), message));
            if (message.kind() == MessageKind.ASSISTANT) {
                page.addAll(stepsByRun.getOrDefault(message.runId(), List.of()));
            }
        }
        Map<String, VariantPosition> variants = new LinkedHashMap<>();
        Map<String, List<String>> siblings = store.findVariantIds(parents);
        for (Message message : top) {
            if (message.kind() == MessageKind.ASSISTANT) {
                List<String> ids = message.parentMessageId() == null ? List.of()
                        : siblings.getOrDefault(message.parentMessageId(), List.of());
                int index = ids.indexOf(message.id());
                variants.put(message.id(), index < 0 ? new VariantPosition(0, 1) : new VariantPosition(index, ids.size()));
            }
        }
        return new ThreadView(thread, page, variants, olderCursor);
    }

    /** The newest page of a thread. */
    public ThreadView getThread(String ownerId, String threadId) {
        return getThread(ownerId, threadId, null, limits.defaultPageSize());
    }

    /** Changes a thread's title, model, skill or archived state; returns the thread as it is now. */
    public ChatThread updateThread(String ownerId, String threadId, ThreadUpdate update) {
        ChatThread thread = ownedThread(ownerId, threadId);
        if (update.titleSet()) {
            if (update.title() == null) {
                throw ChatException.invalidInput("title must not be null");
            }
            thread = thread.withTitle(checkTitle(update.title()));
        }
        if (update.modelSet()) {
            checkOptionalField(update.modelId(), "modelId");
            thread = thread.withModelId(update.modelId());
        }
        if (update.skillSet()) {
            checkOptionalField(update.skill(), "skill");
            thread = thread.withSkill(update.skill());
        }
        if (update.archived() != null) {
            thread = thread.withStatus(update.archived() ? ThreadStatus.ARCHIVED : ThreadStatus.ACTIVE);
        }
        if (!store.updateThread(thread)) {
            throw ChatException.notFound("thread", threadId);
        }
        return store.findThread(threadId).orElseThrow(() -> ChatException.notFound("thread", threadId));
    }

    /**
     * Deletes a thread and everything in it. A thread with an active or queued run is a CONFLICT: cancel
     * the run first.
     */
    public void deleteThread(String ownerId, String threadId) {
        ownedThread(ownerId, threadId);
        if (runs.isThreadBusy(threadId) || !store.findThreadRuns(threadId, LIVE).isEmpty()) {
            throw ChatException.conflict("the thread has an active run; cancel it before deleting the thread");
        }
        store.deleteThread(threadId);
    }

    // ================================================================== runs

    /**
     * Stores the person's message and an assistant placeholder, starts the runtime (or queues the run)
     * and returns at once.
     *
     * @throws ChatException INVALID_INPUT for a blank or oversized message or a non-positive iteration
     *     budget; NOT_FOUND for an unknown thread; CONFLICT when the thread is busy and the strategy is
     *     REJECT (or its active run is held by another instance); RUNTIME_UNAVAILABLE once the engine is
     *     closing; INVALID_INPUT for client tools that are malformed (see {@link StartRun#clientTools()}),
     *     UNSUPPORTED when the runtime cannot call tools
     */
    public RunTicket startRun(String ownerId, String threadId, StartRun request) {
        ChatThread thread = ownedThread(ownerId, threadId);
        String text = checkMessage(request.message());
        checkOptionalField(request.modelId(), "modelId");
        checkOptionalField(request.skill(), "skill");
        if (request.maxIterations() != null && request.maxIterations() < 1) {
            throw ChatException.invalidInput("maxIterations must be positive, got " + request.maxIterations());
        }
        checkClientTools(request.clientTools());
        Instant now = ctx.now();
        String runId = newId();
        String userMessageId = newId();
        String assistantMessageId = newId();
        List<Message> latest = store.listTopLevelMessages(threadId, null, 1);
        String parent = latest.isEmpty() ? null : latest.get(0).id();
        UserMessage user = new UserMessage(userMessageId, threadId, runId, parent, MessageStatus.COMPLETED, now, text);
        AssistantMessage answer = new AssistantMessage(assistantMessageId, threadId, runId, userMessageId,
                MessageStatus.IN_PROGRESS, now, "", null, null);
        Run run = new Run(runId, threadId, ownerId, RunStatus.RUNNING, userMessageId, assistantMessageId, text,
                request.modelId() != null ? request.modelId() : thread.modelId(),
                request.skill() != null ? request.skill() : thread.skill(), request.maxIterations(), request.context(),
                now, null, null, null, null, null);
        ThreadTouch touch = new ThreadTouch(threadId, null, now, defaultTitle(text));
        return runs.start(run, List.of(user, answer), touch, doubleTexting, request.clientTools());
    }

    /**
     * Answers the same user message again: a new assistant message with the same parent, kept side by
     * side with the earlier answers (variants). Only the answers to the thread's latest user message can
     * be regenerated, since the runtime's session cannot branch; the run uses the thread's current model
     * and skill.
     */
    public RunTicket regenerate(String ownerId, String assistantMessageId) {
        return regenerate(ownerId, assistantMessageId, List.of());
    }

    /** Regenerates with tools the person's browser runs for the new run (see {@link StartRun#clientTools()}). */
    public RunTicket regenerate(String ownerId, String assistantMessageId, List<HostToolSpec> clientTools) {
        checkClientTools(clientTools);
        Message message = ownedMessage(ownerId, assistantMessageId);
        if (!(message instanceof AssistantMessage)) {
            throw ChatException.invalidInput("only assistant messages can be regenerated");
        }
        if (message.status() == MessageStatus.IN_PROGRESS) {
            throw ChatException.conflict("the answer is still being written");
        }
        String parentId = message.parentMessageId();
        Message parent = parentId == null ? null : store.findMessage(parentId).orElse(null);
        if (!(parent instanceof UserMessage)) {
            throw ChatException.conflict("this answer has no user message to answer again");
        }
        if (!parent.id().equals(latestUserMessageId(message.threadId()))) {
            throw ChatException.conflict("only the answer to the latest message can be regenerated");
        }
        ChatThread thread = ownedThread(ownerId, message.threadId());
        Run original = runs.findRun(message.runId()).orElse(null);
        Instant now = ctx.now();
        String runId = newId();
        String newAnswerId = newId();
        AssistantMessage answer = new AssistantMessage(newAnswerId, thread.id(), runId, parent.id(),
                MessageStatus.IN_PROGRESS, now, "", null, null);
        Run run = new Run(runId, thread.id(), ownerId, RunStatus.RUNNING, null, newAnswerId,
                ((UserMessage) parent).text(), thread.modelId(), thread.skill(),
                original == null ? null : original.maxIterations(), original == null ? Map.of() : original.context(),
                now, null, null, null, null, null);
        return runs.start(run, List.of(answer), new ThreadTouch(thread.id(), null, now, null), doubleTexting,
                clientTools);
    }

    private @Nullable String latestUserMessageId(String threadId) {
        String before = null;
        while (true) {
            List<Message> page = store.listTopLevelMessages(threadId, before, limits.maxPageSize());
            for (int i = page.size() - 1; i >= 0; i--) {
                if (page.get(i).kind() == MessageKind.USER) {
                    return page.get(i).id();
                }
            }
            if (page.size() < limits.maxPageSize()) {
                return null;
            }
            before = page.get(0).id();
        }
    }

    /**
     * Stops a run; the partial answer is kept as CANCELLED. Returns the run as it stands (an active run
     * may still show RUNNING until the runtime confirms). Cancelling a finished run changes nothing.
     */
    public Run cancel(String ownerId, String runId) {
        return runs.cancel(ownedRun(ownerId, runId));
    }

    /**
     * Answers a pending input of any kind: a clarify question ({@link ClarifyAnswer}), an approval
     * ({@link ApprovalAnswer}: a decision the asker offered, with edited arguments where editing is
     * allowed) or a client tool ({@link ClientToolAnswer}: the tool's result or error). The answer reaches
     * whoever asked — the runtime, or the engine for its own host-action approvals and client tools — once:
     * the same answer again is {@link AnswerResult#REPLAYED}; a different answer after that, or one to an
     * input that expired or was withdrawn, is a CONFLICT. Any instance may take it (it is forwarded to the
     * one holding the run).
     *
     * @throws ChatException NOT_FOUND for an unknown run or input (or another owner's); INVALID_INPUT for
     *     an answer of the wrong shape (see {@link InputChecks#answer}), which changes nothing; CONFLICT as
     *     above; UNSUPPORTED if the runtime cannot take answers of this kind; RUNTIME_UNAVAILABLE if the
     *     answer could not reach the runtime (the input is pending again)
     */
    public AnswerResult answer(String ownerId, String runId, String inputId, InputAnswer answer) {
        Run run = ownedRun(ownerId, runId);
        if (inputId == null || answer == null) {
            throw ChatException.invalidInput("an answer names its input and holds an answer");
        }
        PendingInput input = store.findInput(runId, inputId).orElseThrow(() -> ChatException.notFound("input", inputId));
        if (input.state() == InputState.PENDING) {
            InputChecks.answer(input, answer, limits);
        }
        return runs.answer(run, input, answer);
    }

    /**
     * Answers a clarify question: {@link #answer(String, String, String, InputAnswer)} with a
     * {@link ClarifyAnswer}.
     *
     * @param answer one entry for free text or a single choice, one per option for a multi-select
     *     question; no entry blank
     */
    public AnswerResult answer(String ownerId, String runId, String clarifyId, List<String> answer) {
        return answer(ownerId, runId, clarifyId, new ClarifyAnswer(answer == null ? List.of() : answer));
    }

    /** A run's status, newest seq and every pending input (for a page that reloads). */
    public RunState state(String ownerId, String runId) {
        return runs.state(ownedRun(ownerId, runId));
    }

    /**
     * The run's events after {@code afterSeq}: replayed (from memory or the store), then live until the
     * terminal event, after which the publisher completes. No gap, no duplicate, also while events are
     * being appended. Any number of subscribers; each gets its own subscription. Signals arrive on the
     * engine's delivery threads. A subscriber that requests nothing while the run goes more than
     * {@link EngineLimits#subscriberLagLimit()} events ahead fails with {@link SlowConsumerException}
     * carrying its cursor. Cancelling the subscription never affects the run. A {@link BatchingSubscriber}
     * is also told when each burst of events ends, so that it can write them out together.
     */
    public Flow.Publisher<RunEvent> subscribe(String ownerId, String runId, long afterSeq) {
        ownedRun(ownerId, runId);
        if (afterSeq < 0) {
            throw ChatException.invalidInput("afterSeq must not be negative, got " + afterSeq);
        }
        return runs.subscribe(runId, afterSeq);
    }

    /** Rates an assistant message; stored (one per owner and message) and handed to the runtime. */
    public Feedback feedback(String ownerId, String messageId, FeedbackRating rating, @Nullable String comment) {
        Message message = ownedMessage(ownerId, messageId);
        Objects.requireNonNull(rating, "rating");
        if (!(message instanceof AssistantMessage)) {
            throw ChatException.invalidInput("feedback is given on assistant messages");
        }
        if (comment != null && comment.length() > limits.maxMessageLength()) {
            throw ChatException.invalidInput("the comment is longer than " + limits.maxMessageLength() + " characters");
        }
        Feedback feedback = new Feedback(message.threadId(), message.runId(), messageId, ownerId, rating,
                comment == null || comment.isBlank() ? null : comment, ctx.now());
        store.saveFeedback(feedback);
        try {
            runtime.sendFeedback(feedback);
        } catch (RuntimeException e) {
            log.warn("The runtime did not take feedback on message {}; it is stored", messageId, e);
        }
        return feedback;
    }

    /** The models a person may choose from (the runtime's list). */
    public List<ModelOption> models() {
        return runtime.models();
    }

    /** The skills a person may choose from (the runtime's list). */
    public List<SkillOption> skills() {
        return runtime.skills();
    }

    /** The runtime this engine drives. */
    public RuntimeAdapter runtime() {
        return runtime;
    }

    /**
     * Stops the engine: new runs are refused, runs still working are INTERRUPTED (runs waiting for a
     * clarify answer are left for a future engine to re-attach when the runtime can, queued runs stay
     * queued for the next engine), pending events are stored, threads end.
     * The store is not closed (the host owns it).
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        runs.close();
        for (ExecutorService executor : ownedExecutors) {
            executor.shutdown();
        }
        for (ExecutorService executor : ownedExecutors) {
            try {
                if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
                    executor.shutdownNow();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                executor.shutdownNow();
            }
        }
    }

    // ================================================================== checks

    private ChatThread ownedThread(String ownerId, String threadId) {
        requireOwner(ownerId);
        if (threadId == null) {
            throw ChatException.notFound("thread", "null");
        }
        return store.findThread(threadId)
                .filter(t -> t.ownerId().equals(ownerId))
                .orElseThrow(() -> ChatException.notFound("thread", threadId));
    }

    private Run ownedRun(String ownerId, String runId) {
        requireOwner(ownerId);
        if (runId == null) {
            throw ChatException.notFound("run", "null");
        }
        return runs.findRun(runId)
                .filter(r -> r.ownerId().equals(ownerId))
                .orElseThrow(() -> ChatException.notFound("run", runId));
    }

    private Message ownedMessage(String ownerId, String messageId) {
        requireOwner(ownerId);
        if (messageId == null) {
            throw ChatException.notFound("message", "null");
        }
        Message message = store.findMessage(messageId).orElseThrow(() -> ChatException.notFound("message", messageId));
        store.findThread(message.threadId())
                .filter(t -> t.ownerId().equals(ownerId))
                .orElseThrow(() -> ChatException.notFound("message", messageId));
        return message;
    }

    private static void requireOwner(String ownerId) {
        if (ownerId == null || ownerId.isBlank()) {
            throw ChatException.invalidInput("an owner id is required");
        }
    }

    private void checkLimit(int limit) {
        if (limit < 1 || limit > limits.maxPageSize()) {
            throw ChatException.invalidInput("limit must be between 1 and " + limits.maxPageSize() + ", got " + limit);
        }
    }

    private String checkMessage(String text) {
        if (text == null || text.isBlank()) {
            throw ChatException.invalidInput("the message must not be blank");
        }
        if (text.length() > limits.maxMessageLength()) {
            throw ChatException.invalidInput("the message is longer than " + limits.maxMessageLength() + " characters");
        }
        return text;
    }

    private static String checkTitle(String title) {
        if (title.isBlank()) {
            throw ChatException.invalidInput("a title must not be blank");
        }
        if (title.length() > MAX_FIELD_LENGTH) {
            throw ChatException.invalidInput("a title must not be longer than " + MAX_FIELD_LENGTH + " characters");
        }
        return title.strip();
    }

    private void checkClientTools(List<HostToolSpec> tools) {
        if (tools.isEmpty()) {
            return;
        }
        InputChecks.clientTools(tools, ctx.hostActions());
        if (!runtime.capabilities().contains(Capability.HOST_TOOLS)) {
            throw ChatException.unsupported("this runtime cannot call tools, so it cannot call the page's tools");
        }
    }

    private static void checkOptionalField(@Nullable String value, String name) {
        if (value != null && (value.isBlank() || value.length() > MAX_FIELD_LENGTH)) {
            throw ChatException.invalidInput(name + " must be null or 1 to " + MAX_FIELD_LENGTH + " characters");
        }
    }

    /** The first {@code titleLength} characters of the message, on one line. */
    private String defaultTitle(String text) {
        String line = text.strip().replaceAll("\\s+", " ");
        int end = line.offsetByCodePoints(0, Math.min(limits.titleLength(), line.codePointCount(0, line.length())));
        return line.substring(0, end);
    }

    private static String newId() {
        return UUID.randomUUID().toString();
    }

    private static ThreadFactory daemon(String name) {
        AtomicInteger count = new AtomicInteger();
        return runnable -> {
            Thread thread = new Thread(runnable, name + "-" + count.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    // ================================================================== builder

    /** Configures a {@link ChatEngine}. Not thread-safe; {@link #build()} once. */
    public static final class Builder {
        /** The delivery pool's size unless {@link #deliveryThreads} says otherwise. */
        public static final int DEFAULT_DELIVERY_THREADS = 16;

        private @Nullable RuntimeAdapter runtime;
        private @Nullable ChatStore store;
        private Clock clock = Clock.systemUTC();
        private @Nullable ExecutorService executor;
        private int deliveryThreads = DEFAULT_DELIVERY_THREADS;
        private EngineLimits limits = EngineLimits.defaults();
        private DoubleTexting doubleTexting = DoubleTexting.REJECT;
        private EngineListener listener = new EngineListener() {
        };
        private final Map<String, HostAction> hostActions = new LinkedHashMap<>();
        private RunCoordinator coordinator = RunCoordinator.local();
        private Duration leaseTimeout = Duration.ofSeconds(30);
        private Duration controlTimeout = Duration.ofSeconds(10);

        private Builder() {
        }

        /**
         * Shares the store with other host instances through this coordinator (default: a single instance).
         * With a clustered coordinator the engine leases its runs, takes over the runs of instances that
         * stopped renewing, streams runs held elsewhere from the store as their progress is announced, and
         * forwards cancels and clarify answers to the instance holding a run. The engine does not close the
         * coordinator.
         */
        public Builder coordinator(RunCoordinator value) {
            this.coordinator = Objects.requireNonNull(value, "coordinator");
            return this;
        }

        /**
         * How long a run's lease lasts without renewal (default 30 s; renewed every third of it): after a host
         * dies, its runs are taken over within about one and a half times this. Keep it well above the longest
         * pause a host may have (GC, CPU starvation).
         */
        public Builder leaseTimeout(Duration value) {
            Objects.requireNonNull(value, "leaseTimeout");
            if (value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException("leaseTimeout must be positive");
            }
            this.leaseTimeout = value;
            return this;
        }

        /**
         * How long a clarify answer taken on this instance waits for the instance holding the run to confirm
         * it reached the runtime (default 10 s); without a confirmation the answer is taken back and the call
         * fails with RUNTIME_UNAVAILABLE.
         */
        public Builder controlTimeout(Duration value) {
            Objects.requireNonNull(value, "controlTimeout");
            if (value.isNegative() || value.isZero()) {
                throw new IllegalArgumentException("controlTimeout must be positive");
            }
            this.controlTimeout = value;
            return this;
        }

        /** The runtime to drive. Required. */
        public Builder runtime(RuntimeAdapter value) {
            this.runtime = Objects.requireNonNull(value, "runtime");
            return this;
        }

        /** Where everything is kept. Required; e.g. {@code new InMemoryChatStore()}. */
        public Builder store(ChatStore value) {
            this.store = Objects.requireNonNull(value, "store");
            return this;
        }

        /** The clock for timestamps (default: system UTC). */
        public Builder clock(Clock value) {
            this.clock = Objects.requireNonNull(value, "clock");
            return this;
        }

        /**
         * Where background work runs: run start-up, host-action handlers, runtime calls. Default: an
         * engine-owned cached pool. The engine does not shut down an executor it was given.
         */
        public Builder executor(ExecutorService value) {
            this.executor = Objects.requireNonNull(value, "executor");
            return this;
        }

        /**
         * Threads that deliver events to subscribers (default {@value #DEFAULT_DELIVERY_THREADS}). They
         * mostly wait, on subscribers and their sockets; too few put a queue in front of every live event
         * (the bench's added p99 latency fell from ≈ 15 ms with 2 to under 5 ms with 16 on 2 cores).
         */
        public Builder deliveryThreads(int value) {
            if (value < 1) {
                throw new IllegalArgumentException("deliveryThreads must be positive");
            }
            this.deliveryThreads = value;
            return this;
        }

        public Builder limits(EngineLimits value) {
            this.limits = Objects.requireNonNull(value, "limits");
            return this;
        }

        /** What a message to a busy thread does (default REJECT). */
        public Builder doubleTexting(DoubleTexting value) {
            this.doubleTexting = Objects.requireNonNull(value, "doubleTexting");
            return this;
        }

        public Builder listener(EngineListener value) {
            this.listener = Objects.requireNonNull(value, "listener");
            return this;
        }

        /** Offers a host action to the agent; names must be unique. */
        public Builder hostAction(HostAction action) {
            Objects.requireNonNull(action, "action");
            if (hostActions.putIfAbsent(action.spec().name(), action) != null) {
                throw new IllegalArgumentException("a host action named " + action.spec().name() + " exists");
            }
            return this;
        }

        /**
         * Builds the engine and brings the store in line after a restart (see the class comment).
         *
         * @throws NullPointerException if the runtime or the store is missing
         */
        public ChatEngine build() {
            return new ChatEngine(this);
        }
    }
}
