package dev.parley.chat.engine;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.cluster.RunCoordinator;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.attachment.AttachmentLimits;
import dev.parley.chat.attachment.AttachmentStore;
import dev.parley.chat.attachment.BlobStore;
import dev.parley.chat.attachment.InMemoryBlobStore;
import dev.parley.chat.engine.internal.AttachmentWork;
import dev.parley.chat.engine.internal.Branches;
import dev.parley.chat.engine.internal.EngineContext;
import dev.parley.chat.engine.internal.EventRetention;
import dev.parley.chat.engine.internal.HostActions;
import dev.parley.chat.engine.internal.ThreadExport;
import dev.parley.chat.engine.internal.InputChecks;
import dev.parley.chat.engine.internal.RequestChecks;
import dev.parley.chat.engine.internal.SuggestionWork;
import dev.parley.chat.engine.internal.ThreadViews;
import dev.parley.chat.engine.internal.TrackedScheduler;
import dev.parley.chat.engine.internal.Turns;
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
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.ModelOption;
import dev.parley.chat.runtime.RunThreads;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.runtime.SkillOption;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.outbox.OutboxRouting;
import dev.parley.chat.outbox.OutboxStore;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.store.SearchQuery;
import dev.parley.chat.store.ThreadSearchHit;
import dev.parley.chat.store.ThreadCursor;
import java.io.IOException;
import java.io.OutputStream;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
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
 * new engine on the same store re-attaches to the runs the runtime carried on when it can
 * ({@link Capability#REATTACH}) — a run that streamed from where its stored events reach, with nothing
 * missing or repeated, a run waiting for an answer still answerable —, continues from the store a run of a
 * runtime that keeps nothing across processes ({@link Capability#RESUME}: the agent loop) when it waited only
 * for the person's approvals of host actions (the same approvals stay pending, nothing is asked again, each
 * approved action runs once), stops the other active runs in the runtime ({@link Capability#CANCEL}) and
 * marks them INTERRUPTED, and restarts QUEUED runs. Queued runs of a thread start in the order they arrived.
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
 * <h2>Deletion is final</h2>
 * {@link #deleteThread} and {@link #eraseOwner} leave no row of the thread: no run starts on a thread from
 * the moment its deletion begins, and the store refuses rows of a thread that no longer exists, so a run
 * still writing (here or on another instance) cannot bring anything back; it ends CANCELLED for whoever
 * follows it.
 *
 * <h2>Callers</h2>
 * Every call names its caller ({@code ownerId}); another owner's thread, run or message is
 * {@code NOT_FOUND}. Bad input is {@code INVALID_INPUT} and changes nothing. All methods are thread-safe
 * and return promptly: the agent's work runs on the engine's threads. Errors are {@link ChatException}s.
 */
public final class ChatEngine implements AutoCloseable {
    /** The message of a run that continues an answer ({@link #continueAnswer}). */
    public static final String CONTINUE_PROMPT = "Continue from where your previous answer stopped, without repeating"
            + " what it already says.";

    private static final Logger log = LoggerFactory.getLogger(ChatEngine.class);

    private final EngineContext ctx;
    private final RunManager runs;
    private final ThreadViews views;
    private final Branches branches;
    private final Turns turns;
    private final ChatStore store;
    private final RuntimeAdapter runtime;
    private final EngineLimits limits;
    private final DoubleTexting doubleTexting;
    private final ChatAttachments attachments;
    private final SuggestionWork suggestions;
    private final List<ExecutorService> ownedExecutors;
    private volatile boolean closed;

    private ChatEngine(Builder b) {
        if (b.store == null || b.runtime == null) {
            throw ChatException.configuration("a ChatEngine needs a " + (b.store == null ? "store" : "runtime"));
        }
        if (b.outbox != null && !(b.store instanceof OutboxStore)) {
            throw ChatException.configuration("an outbox (webhooks) needs a store that keeps one (an OutboxStore, as"
                    + " InMemoryChatStore and JdbiChatStore are); " + b.store.getClass().getName() + " is not");
        }
        this.store = b.store;
        this.runtime = b.runtime;
        this.limits = b.limits;
        this.doubleTexting = b.doubleTexting;
        this.ownedExecutors = new ArrayList<>();
        ExecutorService work = b.executor;
        if (work == null) {
            work = RunThreads.executor("parley-work");
            ownedExecutors.add(work);
        }
        ExecutorService delivery = Executors.newFixedThreadPool(b.deliveryThreads,
                RunThreads.platformFactory("parley-delivery"));
        ScheduledExecutorService timers;
        if (b.scheduler == null) {
            ScheduledThreadPoolExecutor owned = new ScheduledThreadPoolExecutor(1, RunThreads.platformFactory("parley-timer"));
            owned.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
            owned.setRemoveOnCancelPolicy(true);
            timers = owned;
        } else {
            timers = new TrackedScheduler(b.scheduler);
        }
        ownedExecutors.add(timers);
        ownedExecutors.add(delivery);
        HostActions hostActions = new HostActions(b.hostActions, b.hostActionSources);
        if (hostActions.any() && !runtime.capabilities().contains(Capability.HOST_TOOLS)) {
            log.warn("{} host action(s) and {} source(s) of them registered, but the runtime cannot call host"
                    + " actions; they are not offered", b.hostActions.size(), b.hostActionSources.size());
        }
        BlobStore blobs = b.blobStore != null ? b.blobStore
                : store instanceof InMemoryChatStore ? new InMemoryBlobStore() : null;
        AttachmentWork attachmentWork = new AttachmentWork(store,
                store instanceof AttachmentStore kept ? kept : null, blobs, b.attachmentLimits,
                runtime.attachmentSupport(), b.clock);
        this.attachments = new ChatAttachments(attachmentWork);
        this.suggestions = new SuggestionWork(store, work, timers, b.suggestionProvider, b.maxSuggestions,
                b.suggestionTimeout);
        this.ctx = new EngineContext(store, runtime, b.clock, limits, work, delivery, timers, b.listener,
                hostActions, b.coordinator, b.leaseTimeout, b.controlTimeout, attachmentWork, b.outbox, suggestions);
        this.runs = new RunManager(ctx, b.contextPropagator);
        this.views = new ThreadViews(ctx, runs);
        this.branches = new Branches(store, runs, views);
        this.turns = new Turns(ctx, runs, views, doubleTexting);
        runs.recover();
        runs.startCoordination();
        if (b.eventRetention != null) {
            Duration age = b.eventRetention;
            ExecutorService worker = work;
            // the timer thread only hands the work over: it also renews leases, which a long compaction must not delay
            timers.scheduleWithFixedDelay(() -> worker.execute(() -> compactQuietly(age)), 1,
                    TimeUnit.HOURS.toMinutes(1), TimeUnit.MINUTES);
        }
    }

    private void compactQuietly(Duration age) {
        try {
            compactEventLogs(age);
        } catch (RuntimeException e) {
            log.warn("Compacting old event logs failed; will try again in an hour", e);
        }
    }

    public static Builder builder() {
        return new Builder();
    }

    // ================================================================== threads

    /** Creates a thread for the caller. */
    public ChatThread createThread(String ownerId, NewThread request) {
        RequestChecks.owner(ownerId);
        String title = request.title() == null ? null : RequestChecks.title(request.title());
        RequestChecks.optionalField(request.modelId(), "modelId");
        RequestChecks.optionalField(request.skill(), "skill");
        checkOffered(request.modelId(), request.skill());
        Instant now = ctx.now();
        ChatThread thread = new ChatThread(newId(), ownerId, title, null, request.modelId(), request.skill(),
                ThreadStatus.ACTIVE, now, now);
        store.createThread(thread);
        return thread;
    }

    /**
     * The caller's thread {@code threadId}, created with that id (and no title, model or skill) if no thread
     * has it: for clients that name their own conversations, such as AG-UI's {@code threadId}. Safe to call
     * concurrently with the same id: one thread is created.
     *
     * @throws ChatException NOT_FOUND if another owner's thread has the id; INVALID_INPUT for an id that is
     *     blank, longer than 200 characters or holds control characters
     */
    public ChatThread openThread(String ownerId, String threadId) {
        RequestChecks.owner(ownerId);
        RequestChecks.optionalField(threadId, "threadId");
        if (threadId == null || threadId.chars().anyMatch(Character::isISOControl)) {
            throw ChatException.invalidInput("threadId must be 1 to " + RequestChecks.MAX_FIELD_LENGTH
                    + " characters without control characters");
        }
        Optional<ChatThread> existing = store.findThread(threadId);
        if (existing.isEmpty()) {
            Instant now = ctx.now();
            try {
                store.createThread(new ChatThread(threadId, ownerId, null, null, null, null, ThreadStatus.ACTIVE, now, now));
            } catch (ChatException e) {
                if (e.code() != ErrorCode.CONFLICT) {
                    throw e;
                }
            }
        }
        return ownedThread(ownerId, threadId);
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
        RequestChecks.owner(ownerId);
        ThreadCursor after = cursor == null ? null : ThreadPage.decode(cursor);
        RequestChecks.limit(limits, limit);
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
     * A page of a thread's active branch: its newest {@code limit} user and assistant messages before the
     * message {@code before} (the newest ones when null), every answer to a user message side by side with
     * its variant position, each answer with its steps, and each user message's place among its edits. A run
     * still going on in this process shows its live messages.
     *
     * @throws ChatException INVALID_INPUT if {@code before} is not a user or assistant message on the active
     *     branch, or {@code limit} is out of range
     */
    public ThreadView getThread(String ownerId, String threadId, @Nullable String before, int limit) {
        ChatThread thread = ownedThread(ownerId, threadId);
        RequestChecks.limit(limits, limit);
        return views.view(thread, before, limit);
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
            thread = thread.withTitle(RequestChecks.title(update.title()));
        }
        if (update.modelSet()) {
            RequestChecks.optionalField(update.modelId(), "modelId");
            checkOffered(update.modelId(), null);
            thread = thread.withModelId(update.modelId());
        }
        if (update.skillSet()) {
            RequestChecks.optionalField(update.skill(), "skill");
            checkOffered(null, update.skill());
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
     * Deletes a thread and everything in it, for good: from the moment this is called no run starts on it
     * (a message sent meanwhile is NOT_FOUND), and nothing of it comes back afterwards (the store refuses
     * rows of a thread that no longer exists, also from a run another instance started meanwhile).
     *
     * @throws ChatException NOT_FOUND for an unknown thread or another owner's; CONFLICT if the thread has
     *     an active or queued run: cancel it first ({@link #eraseOwner} stops runs itself)
     */
    public void deleteThread(String ownerId, String threadId) {
        ownedThread(ownerId, threadId);
        runs.deleteThread(threadId, false, Duration.ZERO);
        ctx.attachments().purgeUnreferenced();
    }

    /**
     * An answer's follow-up suggestions ({@link Builder#suggestions}): completed at once when they are stored or
     * none are coming, else when this engine has stored them, or after {@code wait} with
     * {@link AnswerSuggestions#pending()} true. The future never completes exceptionally; it may complete on an
     * engine thread, so do not block there.
     *
     * @param wait how long to wait for suggestions still being made: zero to not wait, at most 60 seconds
     * @throws ChatException NOT_FOUND for an unknown message or another owner's; INVALID_INPUT if it is not an
     *     answer (an assistant message) or {@code wait} is negative or over 60 seconds
     */
    public CompletableFuture<AnswerSuggestions> suggestions(String ownerId, String answerMessageId, Duration wait) {
        Message message = ownedMessage(ownerId, answerMessageId);
        if (!(message instanceof AssistantMessage answer)) {
            throw ChatException.invalidInput("only answers (assistant messages) have suggestions");
        }
        if (wait == null || wait.isNegative() || wait.compareTo(Duration.ofSeconds(60)) > 0) {
            throw ChatException.invalidInput("wait must be between 0 and 60 seconds");
        }
        return suggestions.find(answer, wait, runs.liveMessages(answer.runId()) != null);
    }

    /** Files and images sent with messages: upload, find, read. */
    public ChatAttachments attachments() {
        return attachments;
    }

    // ================================================================== runs

    /**
     * Stores the person's message and an assistant placeholder, starts the runtime (or queues the run)
     * and returns at once. The message follows the active branch's last message as it is when the run is
     * stored: two messages sent at once (ENQUEUE, INTERRUPT) follow one another. A thread whose run has
     * logged its end is not busy: a start that comes while that run is still storing its end and freeing the
     * thread (as one may, right after its subscriber saw the end) waits for it, up to a few seconds.
     *
     * @throws ChatException INVALID_INPUT for a blank or oversized message or a non-positive iteration
     *     budget; NOT_FOUND for an unknown thread; CONFLICT when the thread is busy and the strategy is
     *     REJECT (or its active run is held by another instance); RUNTIME_UNAVAILABLE once the engine is
     *     closing; INVALID_INPUT for client tools that are malformed (see {@link StartRun#clientTools()}),
     *     UNSUPPORTED when the runtime cannot call tools; INVALID_INPUT for a model or skill (the request's,
     *     else the thread's) the runtime does not offer, when it lists what it offers — nothing is stored
     */
    public RunTicket startRun(String ownerId, String threadId, StartRun request) {
        ChatThread thread = ownedThread(ownerId, threadId);
        RequestChecks.startRun(limits, request);
        checkClientTools(request.clientTools());
        checkOffered(request.modelId() != null ? request.modelId() : thread.modelId(),
                request.skill() != null ? request.skill() : thread.skill());
        return turns.send(thread, request);
    }

    /**
     * Checks a message as {@link #startRun} would on a thread with no model or skill of its own, storing
     * nothing: for hosts that create a thread on first use (as the AG-UI endpoint does, see
     * {@link #openThread}) and must not create one for a message that will be refused.
     *
     * @throws ChatException INVALID_INPUT or UNSUPPORTED as {@link #startRun} says
     */
    public void checkStartRun(StartRun request) {
        RequestChecks.startRun(limits, request);
        checkClientTools(request.clientTools());
        checkOffered(request.modelId(), request.skill());
    }

    /**
     * Edits a user message: stores a new user message beside it (the same parent) and starts a run answering
     * it; the edited message and its answers stay, on their own branch, and the new one becomes the active
     * branch. The run does not continue the runtime's session (that session saw the old branch): it starts a
     * new one and is given the conversation before the edit ({@code RunRequest.history}). A thread with an
     * active run follows the double-texting rule, as for {@link #startRun}.
     *
     * @throws ChatException NOT_FOUND for an unknown message or another owner's; INVALID_INPUT if it is not a
     *     user message, or as for {@link #startRun}
     */
    public RunTicket editMessage(String ownerId, String userMessageId, StartRun request) {
        Message message = ownedMessage(ownerId, userMessageId);
        if (!(message instanceof UserMessage)) {
            throw ChatException.invalidInput("only the person's own messages can be edited");
        }
        RequestChecks.startRun(limits, request);
        checkClientTools(request.clientTools());
        ChatThread thread = ownedThread(ownerId, message.threadId());
        checkOffered(request.modelId() != null ? request.modelId() : thread.modelId(),
                request.skill() != null ? request.skill() : thread.skill());
        return turns.sendEdit(thread, request, message.parentMessageId());
    }

    /**
     * Makes the branch through {@code messageId} (a user or assistant message, e.g. an edit's sibling) the
     * thread's active branch: from it down to its newest message. Returns the thread's newest page.
     *
     * @throws ChatException NOT_FOUND for an unknown message or another owner's; INVALID_INPUT if it is not a
     *     user or assistant message; CONFLICT while the thread has an active run
     */
    public ThreadView switchBranch(String ownerId, String messageId) {
        Message message = ownedMessage(ownerId, messageId);
        branches.switchTo(ownedThread(ownerId, message.threadId()), message);
        return getThread(ownerId, message.threadId());
    }

    /**
     * Rolls the conversation back to an earlier answer ("continue from here"): the active branch ends at
     * {@code answerMessageId}, so the thread view ends there and the next message starts a new branch after it.
     * What came after stays stored on its own branch ({@link #switchBranch} to one of its messages brings it
     * back). The runtime's next run does not continue its session but is given the conversation up to this
     * answer ({@code RunRequest.history}), so it does not see what was rolled back. Returns the thread's newest
     * page.
     *
     * @throws ChatException NOT_FOUND for an unknown message or another owner's; INVALID_INPUT if it is not an
     *     assistant message; CONFLICT while the thread has an active run, or if a message was sent meanwhile
     */
    public ThreadView rollBack(String ownerId, String answerMessageId) {
        Message message = ownedMessage(ownerId, answerMessageId);
        branches.rollBackTo(ownedThread(ownerId, message.threadId()), message);
        return getThread(ownerId, message.threadId());
    }

    /**
     * Asks the runtime to go on with an answer that ended early — stopped, failed, interrupted, cut at the model's
     * length limit or its iteration budget: a new run on the same branch with the message
     * {@link #CONTINUE_PROMPT}, whose runtime has the conversation including the partial answer (its session, or
     * the history). Returns its ticket, as {@link #startRun}.
     *
     * @throws ChatException NOT_FOUND for an unknown message or another owner's; INVALID_INPUT if it is not an
     *     assistant message; CONFLICT while the thread has an active run, or if it is not the last answer of the
     *     active branch (roll back to it first)
     */
    public RunTicket continueAnswer(String ownerId, String answerMessageId) {
        Message message = ownedMessage(ownerId, answerMessageId);
        ChatThread thread = ownedThread(ownerId, message.threadId());
        branches.requireContinuable(thread, message);
        return startRun(ownerId, thread.id(), StartRun.of(CONTINUE_PROMPT));
    }

    /**
     * Takes back the active branch's last exchange — its last user message and everything after it — as
     * {@link #rollBack} to the answer before that message. Nothing is deleted. Returns the thread's newest page.
     *
     * @throws ChatException NOT_FOUND for an unknown thread or another owner's; CONFLICT while the thread has an
     *     active run, for an empty thread, or when the last exchange is the first (nothing before it: edit the
     *     message instead)
     */
    public ThreadView undo(String ownerId, String threadId) {
        branches.undo(ownedThread(ownerId, threadId));
        return getThread(ownerId, threadId);
    }

    /**
     * Answers the same user message again: a new assistant message with the same parent, kept side by
     * side with the earlier answers (variants). Only the answers to the last user message of the active
     * branch can be regenerated; the run uses the thread's current model and skill.
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
        ChatThread thread = ownedThread(ownerId, message.threadId());
        checkOffered(thread.modelId(), thread.skill());
        if (!views.lastUserMessage(thread).map(Message::id).filter(parent.id()::equals).isPresent()) {
            throw ChatException.conflict("only the answer to the latest message can be regenerated");
        }
        return turns.regenerate(thread, (UserMessage) parent, runs.findRun(message.runId()).orElse(null), clientTools);
    }

    /**
     * Stops a run; the partial answer is kept as CANCELLED. Returns the run as it stands (an active run
     * may still show RUNNING until the runtime confirms). Cancelling a finished run changes nothing. A cancel
     * takes the same path whichever instance receives it: a queued run leaves its thread's queue and ends
     * CANCELLED at once, so the thread takes the next message once the run ahead of it ends.
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
     * <p>An answer reaches its asker at most once, whatever the timing: answers to one input are taken one at
     * a time on an instance (a caller told REPLAYED knows the identical answer reached the runtime, when the
     * run is held on this instance); the instance holding the run never delivers an input twice, even if
     * another instance gave up waiting for its confirmation and the person sent the answer again (that retry
     * is a CONFLICT, and the input stays ANSWERED). An answer that could not be delivered is taken back: the
     * input is pending again, or CANCELLED once its run has ended. An input whose deadline passes while an
     * answer to it is on its way expires if that delivery fails.
     *
     * @throws ChatException NOT_FOUND for an unknown run or input (or another owner's); INVALID_INPUT for
     *     an answer of the wrong shape (of another kind than the input, an empty or overlong clarify answer,
     *     several answers to a single-choice question, a decision the approval does not offer, edited
     *     arguments where they are not editable, with a decision that does not allow the call, overlong or
     *     not JSON; a client tool's overlong result), which changes nothing; CONFLICT as above; UNSUPPORTED
     *     if the runtime cannot take answers of this kind; RUNTIME_UNAVAILABLE if the answer could not reach
     *     the runtime (the input is pending again), or if the run is not followed yet after a restart (its
     *     recovery is retried shortly; send the answer again then)
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

    // ================================================================== find, export, forget

    /**
     * A page of the caller's threads whose title or a message holds every word and phrase of {@code query}
     * (words as prefixes; "quoted text" as a phrase; operators and punctuation are plain text), newest match
     * first (see {@link ChatStore#searchThreads}), each with a snippet of the matching text, starting at
     * {@code cursor} (a
     * {@link SearchPage#nextCursor()} given for the same query; null for the first page). A cursor marks a
     * place in the ranking: a thread whose messages change between two pages may move, and so show twice or
     * not at all.
     *
     * @throws ChatException INVALID_INPUT for a query without words, longer than 500 characters or of more
     *     than 16 terms, a cursor this engine did not give out for this query, or a limit out of range
     */
    public SearchPage searchThreads(String ownerId, String query, @Nullable String cursor, int limit) {
        RequestChecks.owner(ownerId);
        SearchQuery parsed = SearchQuery.of(query);
        long skip = cursor == null ? 0 : SearchPage.decode(cursor, parsed);
        RequestChecks.limit(limits, limit);
        if (skip > Integer.MAX_VALUE - limit - 1) {
            return new SearchPage(List.of(), null);
        }
        List<ThreadSearchHit> hits = store.searchThreads(ownerId, parsed, (int) skip, limit + 1);
        if (hits.size() <= limit) {
            return new SearchPage(hits, null);
        }
        return new SearchPage(hits.subList(0, limit), SearchPage.encode(parsed, skip + limit));
    }

    /**
     * Writes a thread out to {@code out} (left open), streamed page by page so a thread of any length takes
     * constant memory: {@link ExportFormat#JSON} holds everything, {@link ExportFormat#MARKDOWN} the active
     * branch as a person reads it.
     *
     * @throws ChatException NOT_FOUND for an unknown thread or another owner's
     * @throws IOException if {@code out} fails
     */
    public void exportThread(String ownerId, String threadId, ExportFormat format, OutputStream out) throws IOException {
        exportThread(ownerId, threadId, format, out, null);
    }

    /**
     * As {@link #exportThread(String, String, ExportFormat, OutputStream)}; the Markdown links each message's
     * files to the address {@code attachmentLink} gives (where the host serves them), or names them when it is
     * null. The JSON lists them by id either way.
     */
    public void exportThread(String ownerId, String threadId, ExportFormat format, OutputStream out,
            @Nullable Function<MessageAttachment, String> attachmentLink) throws IOException {
        ChatThread thread = ownedThread(ownerId, threadId);
        ThreadExport export = new ThreadExport(store, views, limits.maxPageSize());
        if (format == ExportFormat.MARKDOWN) {
            export.markdown(thread, out, attachmentLink);
        } else {
            export.json(thread, ctx.now(), out);
        }
    }

    /**
     * Compacts the event logs of runs that ended more than {@code age} ago (see
     * {@link Builder#eventRetention}); their messages stay, and a replay of such a run shows its start, its
     * messages as they ended, a line saying the log was compacted, and its end.
     *
     * @return how many runs were compacted
     */
    public int compactEventLogs(Duration age) {
        Objects.requireNonNull(age, "age");
        return new EventRetention(ctx).compactRunsEndedBefore(ctx.now().minus(age));
    }

    /**
     * Erases everything of an owner, for a data-subject request: every thread with its messages, runs, events,
     * pending inputs, approvals and feedback. Each thread is deleted as by {@link #deleteThread}, for good,
     * except that its runs (here and on other instances) are stopped first: each gets the cancel grace period
     * and 5 s more to end, then the engine ends the ones it holds itself. A message sent to a thread of the
     * owner while it is erased is NOT_FOUND or its run is stopped; no row of it remains. Works a thread at a
     * time (each removed whole), so after a crash calling it again finishes the job.
     *
     * @return how many threads were erased
     */
    public int eraseOwner(String ownerId) {
        RequestChecks.owner(ownerId);
        int erased = 0;
        List<ChatThread> page;
        do {
            page = store.listThreads(ownerId, null, limits.maxPageSize());
            for (ChatThread thread : page) {
                if (runs.deleteThread(thread.id(), true, limits.cancelGracePeriod().plusSeconds(5))) {
                    erased++;
                }
            }
        } while (!page.isEmpty());
        ctx.attachments().eraseOwner(ownerId);
        return erased;
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

    /** The limits this engine was built with: page sizes for callers that page through it. */
    public EngineLimits limits() {
        return limits;
    }

    /**
     * Stops the engine: new runs are refused; runs a future engine can re-attach to (the runtime can; a run
     * that streams once its stream said where it stands, or one waiting for an answer the runtime asked) are
     * left for it, their streams closed without stopping them in the runtime; queued runs stay queued; every
     * other working run is stopped in the runtime and INTERRUPTED. Pending events (and the resume points of
     * the runs left) are stored, threads end. The store is not closed (the host owns it).
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        suggestions.close();
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
        RequestChecks.owner(ownerId);
        if (threadId == null) {
            throw ChatException.notFound("thread", "null");
        }
        return store.findThread(threadId)
                .filter(t -> t.ownerId().equals(ownerId))
                .orElseThrow(() -> ChatException.notFound("thread", threadId));
    }

    private Run ownedRun(String ownerId, String runId) {
        RequestChecks.owner(ownerId);
        if (runId == null) {
            throw ChatException.notFound("run", "null");
        }
        return runs.findRun(runId)
                .filter(r -> r.ownerId().equals(ownerId))
                .orElseThrow(() -> ChatException.notFound("run", runId));
    }

    private Message ownedMessage(String ownerId, String messageId) {
        RequestChecks.owner(ownerId);
        if (messageId == null) {
            throw ChatException.notFound("message", "null");
        }
        Message message = store.findMessage(messageId).orElseThrow(() -> ChatException.notFound("message", messageId));
        store.findThread(message.threadId())
                .filter(t -> t.ownerId().equals(ownerId))
                .orElseThrow(() -> ChatException.notFound("message", messageId));
        return message;
    }

    /**
     * Refuses a model or skill the runtime does not offer, when the runtime says its list is complete
     * ({@link RuntimeAdapter#offersOnlyListedModels()}, {@link RuntimeAdapter#offersOnlyListedSkills()}); a
     * runtime that cannot list takes any name and fails the run itself if it does not know it.
     */
    private void checkOffered(@Nullable String modelId, @Nullable String skill) {
        if (modelId != null && runtime.offersOnlyListedModels()
                && runtime.models().stream().noneMatch(m -> m.id().equals(modelId))) {
            throw ChatException.invalidInput("the runtime offers no model '" + modelId + "'");
        }
        if (skill != null && runtime.offersOnlyListedSkills()
                && runtime.skills().stream().noneMatch(k -> k.id().equals(skill))) {
            throw ChatException.invalidInput("the runtime offers no skill '" + skill + "'");
        }
    }

    private void checkClientTools(List<HostToolSpec> tools) {
        if (tools.isEmpty()) {
            return;
        }
        InputChecks.clientTools(tools, ctx.hostActions().fixed());
        if (!runtime.capabilities().contains(Capability.HOST_TOOLS)) {
            throw ChatException.unsupported("this runtime cannot call tools, so it cannot call the page's tools");
        }
    }

    private static String newId() {
        return UUID.randomUUID().toString();
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
        private @Nullable ScheduledExecutorService scheduler;
        private int deliveryThreads = DEFAULT_DELIVERY_THREADS;
        private EngineLimits limits = EngineLimits.defaults();
        private DoubleTexting doubleTexting = DoubleTexting.REJECT;
        private EngineListener listener = new EngineListener() {
        };
        private RunContextPropagator contextPropagator = RunContextPropagator.NONE;
        private final Map<String, HostAction> hostActions = new LinkedHashMap<>();
        private final List<HostActionSource> hostActionSources = new ArrayList<>();
        private RunCoordinator coordinator = RunCoordinator.local();
        private Duration leaseTimeout = Duration.ofSeconds(30);
        private Duration controlTimeout = Duration.ofSeconds(10);
        private @Nullable Duration eventRetention;
        private @Nullable BlobStore blobStore;
        private AttachmentLimits attachmentLimits = AttachmentLimits.defaults();
        private @Nullable OutboxRouting outbox;
        private @Nullable SuggestionProvider suggestionProvider;
        private int maxSuggestions = 3;
        private Duration suggestionTimeout = Duration.ofSeconds(20);

        private Builder() {
        }

        /**
         * Compacts the event logs of runs that ended more than {@code value} ago, checked hourly (off by
         * default): their messages stay, the token-by-token log goes (see {@link ChatEngine#compactEventLogs}).
         */
        public Builder eventRetention(Duration value) {
            Objects.requireNonNull(value, "eventRetention");
            if (value.isNegative() || value.isZero()) {
                throw ChatException.configuration("eventRetention must be positive, got " + value);
            }
            this.eventRetention = value;
            return this;
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
                throw ChatException.configuration("leaseTimeout must be positive, got " + value);
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
                throw ChatException.configuration("controlTimeout must be positive, got " + value);
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

        /**
         * Where attachment bytes are kept. Attachments work when the store keeps them (it implements
         * {@link AttachmentStore}, as both of Parley's stores do) and a blob store is set; on an
         * {@link InMemoryChatStore} without one, an {@link InMemoryBlobStore} is used. The engine does not
         * close it.
         */
        public Builder blobStore(BlobStore value) {
            this.blobStore = Objects.requireNonNull(value, "blobStore");
            return this;
        }

        /**
         * Writes an outbox entry for each destination {@code routing} names whenever a run ends or asks for a
         * person's input, in the same store write as the run's end or the input request (see
         * {@link dev.parley.chat.outbox}); a dispatcher such as {@code chat-webhooks}' delivers them. Off by
         * default: without it no batch carries an entry. The store must implement {@link OutboxStore}
         * ({@link #build()} fails otherwise).
         */
        public Builder outbox(OutboxRouting routing) {
            this.outbox = Objects.requireNonNull(routing, "routing");
            return this;
        }

        /** Bounds on attachments (default: {@link AttachmentLimits#defaults()}). */
        public Builder attachmentLimits(AttachmentLimits value) {
            this.attachmentLimits = Objects.requireNonNull(value, "attachmentLimits");
            return this;
        }

        /** The clock for timestamps (default: system UTC). */
        public Builder clock(Clock value) {
            this.clock = Objects.requireNonNull(value, "clock");
            return this;
        }

        /**
         * Where background work runs: run start-up, host-action handlers, runtime calls. Default: engine-owned
         * {@link RunThreads} named {@code parley-work-N} (virtual threads on Java 21+, a cached pool of platform
         * threads on 17 or with {@value RunThreads#PROPERTY}{@code =false}). The engine does not shut down an
         * executor it was given.
         */
        public Builder executor(ExecutorService value) {
            this.executor = Objects.requireNonNull(value, "executor");
            return this;
        }

        /**
         * Where the engine's timed work runs: a stopped run's grace period, input deadlines, lease renewals and
         * take-overs, retries of a failed recovery, compaction's hourly check, polls for runs held elsewhere.
         * Each task is short (longer work is handed to the {@link #executor}). Default: one engine-owned
         * platform thread, {@code parley-timer}. Together with {@link #clock} this decides the engine's sense of
         * time: a scheduler that runs tasks when its own clock says so (a virtual-time scheduler, as a
         * simulation uses) and the matching clock make every deadline follow that time. The engine does not
         * shut down a scheduler it was given; closing the engine cancels the tasks it still has waiting there.
         */
        public Builder scheduler(ScheduledExecutorService value) {
            this.scheduler = Objects.requireNonNull(value, "scheduler");
            return this;
        }

        /**
         * Threads that deliver events to subscribers (default {@value #DEFAULT_DELIVERY_THREADS}). They
         * mostly wait, on subscribers and their sockets; too few put a queue in front of every live event
         * (the bench's added p99 latency fell from ≈ 15 ms with 2 to under 5 ms with 16 on 2 cores).
         */
        public Builder deliveryThreads(int value) {
            if (value < 1) {
                throw ChatException.configuration("deliveryThreads must be positive, got " + value);
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

        /**
         * Carries the context of the thread that starts a run (its trace, say) to the thread that launches it
         * (default: {@link RunContextPropagator#NONE}); see {@link RunContextPropagator} for when it is called.
         */
        public Builder contextPropagator(RunContextPropagator value) {
            this.contextPropagator = Objects.requireNonNull(value, "contextPropagator");
            return this;
        }

        /** Offers a host action to the agent; names must be unique. */
        public Builder hostAction(HostAction action) {
            Objects.requireNonNull(action, "action");
            if (hostActions.putIfAbsent(action.spec().name(), action) != null) {
                throw ChatException.configuration("a host action named " + action.spec().name() + " exists");
            }
            return this;
        }

        /**
         * Offers the actions {@code source} decides per run (see {@link HostActionSource}), after the fixed
         * ones and those of the sources registered before it. The runtime must be able to call host tools
         * ({@code HOST_TOOLS}); otherwise, as with fixed actions, nothing is offered and a warning is logged.
         */
        public Builder hostActions(HostActionSource source) {
            hostActionSources.add(Objects.requireNonNull(source, "source"));
            return this;
        }

        /**
         * Makes follow-up suggestions for every answer whose run SUCCEEDED (default: none): after the run ended —
         * never delaying it — the provider is asked, at most one call per conversation thread at a time, and what
         * it returns is stored on the answer ({@link AssistantMessage#suggestions()}), so the thread view and
         * {@link ChatEngine#suggestions} show it. Skipped while a newer run is active on the thread; a result
         * that comes after a newer run started there is dropped. A provider that fails or times out leaves the
         * answer without suggestions. {@link dev.parley.chat.agent.ModelSuggestions} asks a model.
         */
        public Builder suggestions(SuggestionProvider provider) {
            this.suggestionProvider = Objects.requireNonNull(provider, "provider");
            return this;
        }

        /** How many suggestions an answer keeps at most (default 3, at most 10). */
        public Builder maxSuggestions(int value) {
            if (value < 1 || value > 10) {
                throw ChatException.configuration("maxSuggestions must be between 1 and 10, got " + value);
            }
            this.maxSuggestions = value;
            return this;
        }

        /** How long a suggestion call may take before it is abandoned (default 20 s). */
        public Builder suggestionTimeout(Duration value) {
            Objects.requireNonNull(value, "suggestionTimeout");
            if (value.isNegative() || value.isZero()) {
                throw ChatException.configuration("suggestionTimeout must be positive, got " + value);
            }
            this.suggestionTimeout = value;
            return this;
        }

        /**
         * Builds the engine and brings the store in line after a restart (see the class comment).
         *
         * @throws ChatException CONFIGURATION if the runtime or the store is missing, or an
         *     {@link #outbox outbox} is set and the store keeps none
         */
        public ChatEngine build() {
            return new ChatEngine(this);
        }
    }
}
