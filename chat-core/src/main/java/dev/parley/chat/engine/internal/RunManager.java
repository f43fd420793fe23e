package dev.parley.chat.engine.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.cluster.ControlMessage;
import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.engine.AnswerResult;
import dev.parley.chat.engine.DoubleTexting;
import dev.parley.chat.engine.RunContextPropagator;
import dev.parley.chat.engine.RunState;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.store.AnswerOutcome;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadTouch;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.store.BranchMovedException;
import dev.parley.chat.store.ThreadGoneException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Function;
import java.util.Set;
import java.util.UUID;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Flow;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts, stops, answers, observes and recovers runs. The public {@link dev.parley.chat.engine.ChatEngine}
 * checks input and ownership, then calls this. Thread-safe.
 */
public final class RunManager implements RunHost {
    private static final Logger log = LoggerFactory.getLogger(RunManager.class);
    /** The longest a start waits for an ended run to free its thread ({@link #awaitEndingRun}). */
    private static final long ENDING_RUN_WAIT_MILLIS = 5_000;
    /** How often the runtime is told to forget a deleted thread before that is given up. */
    private static final int FORGET_ATTEMPTS = 5;
    /** How often a start is tried when other instances keep moving the thread's branch meanwhile. */
    private static final int BRANCH_ATTEMPTS = 5;

    private final EngineContext ctx;
    private final RunContexts contexts;
    private final RunRecovery recovery;
    /** Set when the engine closes: no run starts any more, queued runs stay queued. Guarded by ctx.lanes. */
    private boolean closing;
    /** Threads being deleted through this instance (with how many deletes are under way): no run starts on them. Guarded by ctx.lanes. */
    private final Map<String, Integer> deleting = new HashMap<>();
    private final ClusterDuties cluster;
    /** Answers to one input are taken one at a time (striped by run and input id; answers are rare). */
    private final ReentrantLock[] answerLocks = new ReentrantLock[64];

    public RunManager(EngineContext ctx) {
        this(ctx, RunContextPropagator.NONE);
    }

    /** @param propagator carries the context of the thread that starts a run to the run's launch */
    public RunManager(EngineContext ctx, RunContextPropagator propagator) {
        this.ctx = ctx;
        this.contexts = new RunContexts(propagator);
        this.recovery = new RunRecovery(ctx, this);
        this.cluster = new ClusterDuties(ctx, recovery, this);
        for (int i = 0; i < answerLocks.length; i++) {
            answerLocks[i] = new ReentrantLock();
        }
    }

    /** The run as it is now: from memory while it is active here, else from the store. */
    public Optional<Run> findRun(String runId) {
        ActiveRun active = ctx.activeRuns.get(runId);
        if (active != null) {
            return Optional.of(active.published());
        }
        return ctx.store.findRun(runId);
    }

    /** True while the thread has a run that is active or queued in this process. */
    public boolean isThreadBusy(String threadId) {
        return ctx.lanes.isBusy(threadId);
    }

    /**
     * Stops every run of a thread that is queued or active (on this instance or, through the coordinator,
     * another) and waits up to {@code patience}, by the engine's clock, for them to end.
     */
    private void stopThread(String threadId, Duration patience) {
        for (Run run : ctx.store.findThreadRuns(threadId, ACTIVE)) {
            cancel(run);
        }
        long deadline = ctx.clock.millis() + patience.toMillis();
        while (ctx.clock.millis() < deadline && (isThreadBusy(threadId)
                || !ctx.store.findThreadRuns(threadId, ACTIVE).isEmpty())) {
            if (!StoreRetry.pause(20)) {
                return;
            }
        }
    }

    /** The live messages of a run active here (fresher than the stored ones), or null. */
    public @Nullable List<Message> liveMessages(String runId) {
        ActiveRun active = ctx.activeRuns.get(runId);
        return active == null ? null : active.messages();
    }

    /**
     * Stores a new run with its first messages and starts it, or queues it, as the double-texting
     * strategy says. Returns at once; the work goes on in the background. The first messages are made from
     * the thread as it is at that moment, read while no other start on this instance can change it (a new
     * message's parent is the active branch's last message then).
     *
     * @param initialMessages the run's first messages (its user message, if any, and its answer's
     *     placeholder), given the thread as it is when the run is stored
     * @throws ChatException NOT_FOUND if the thread is gone or being deleted; CONFLICT as the strategy says
     */
    public RunTicket start(Run run, Function<ChatThread, List<Message>> initialMessages, ThreadTouch touch,
            DoubleTexting strategy, List<HostToolSpec> clientTools) {
        String threadId = run.threadId();
        awaitEndingRun(threadId);
        Placed placed = null;
        for (int attempt = 1; placed == null; attempt++) {
            try {
                placed = place(run, initialMessages, touch, strategy, clientTools);
            } catch (BranchMovedException moved) {
                if (attempt == BRANCH_ATTEMPTS) {
                    throw ChatException.conflict("the thread's conversation kept moving (messages sent through other"
                            + " host instances); send again");
                }
            }
        }
        if (placed.interrupted() != null) {
            placed.interrupted().cancel();
        }
        keepStartContext(placed.run().runId(), contexts.capture(placed.run().snapshot()));
        if (!placed.queued()) {
            launch(placed.run());
        }
        return new RunTicket(run.id(), threadId, run.userMessageId(), run.assistantMessageId(),
                placed.queued() ? RunStatus.QUEUED : RunStatus.RUNNING);
    }

    /** A run stored and placed in its thread's lane: to launch, or queued (and a run it interrupts). */
    private record Placed(ActiveRun run, boolean queued, @Nullable ActiveRun interrupted) {
    }

    /**
     * Stores the run and places it in its thread's lane, deciding from the thread as it is now, while no other
     * start on this instance can change it. The write expects the thread's active leaf as read: if another
     * instance moved the branch meanwhile, nothing is stored and this is tried again.
     *
     * @throws BranchMovedException if the thread's active branch moved between the read and the write
     */
    private Placed place(Run run, Function<ChatThread, List<Message>> initialMessages, ThreadTouch touch,
            DoubleTexting strategy, List<HostToolSpec> clientTools) {
        String threadId = run.threadId();
        synchronized (ctx.lanes) {
            if (closing) {
                throw new ChatException(ErrorCode.RUNTIME_UNAVAILABLE, "the engine is shutting down");
            }
            if (deleting.containsKey(threadId)) {
                throw ChatException.notFound("thread", threadId);
            }
            ActiveRun current = ctx.lanes.current(threadId);
            List<Run> storedActive = current != null ? List.of() : ctx.store.findThreadRuns(threadId, ACTIVE);
            boolean busy = current != null || !storedActive.isEmpty();
            if (busy && strategy == DoubleTexting.REJECT) {
                throw busyThread(strategy);
            }
            if (busy && current == null) {
                boolean endingHere = storedActive.stream().map(r -> ctx.activeRuns.get(r.id()))
                        .anyMatch(a -> a != null && a.isFinished());
                throw ChatException.conflict(endingHere
                        ? "the thread's last run has ended, but its end is not stored yet; try again shortly"
                        : "the thread's active run is held by another host instance");
            }
            ChatThread thread = ctx.store.findThread(threadId).orElseThrow(() -> ChatException.notFound("thread", threadId));
            List<Message> first = initialMessages.apply(thread);
            Run toStore = busy ? run.withStatus(RunStatus.QUEUED) : run;
            ActiveRun created = new ActiveRun(ctx, toStore, first, 0, EngineContext.SEQ_RESERVATION_BLOCK, this,
                    clientTools);
            StoreBatch.Builder batch = StoreBatch.builder().run(toStore).messages(first).touch(touch)
                    .reserveSeq(toStore.id(), EngineContext.SEQ_RESERVATION_BLOCK)
                    .expectActiveLeaf(threadId, thread.activeLeafId());
            if (ctx.clustered()) {
                batch.lease(new RunLease(toStore.id(), ctx.coordinator.instanceId(), ctx.leaseEnd()));
            }
            try {
                ctx.write(batch.build());
            } catch (ThreadGoneException e) {
                throw ChatException.notFound("thread", threadId);
            } catch (BranchMovedException e) {
                throw e;
            } catch (ChatException e) {
                if (e.code() == ErrorCode.CONFLICT) {
                    throw busyThread(strategy);
                }
                ctx.activeRuns.put(run.id(), created);
                endIfStoredAnyway(created, e);
                throw e;
            }
            ctx.activeRuns.put(run.id(), created);
            recovery.startedHere(run.id());
            ActiveRun interrupted = null;
            if (!busy) {
                ctx.lanes.occupy(threadId, created);
            } else {
                ctx.lanes.enqueue(threadId, created);
                if (strategy == DoubleTexting.INTERRUPT) {
                    interrupted = current;
                }
            }
            return new Placed(created, busy, interrupted);
        }
    }

    /**
     * A start whose store write failed may have been stored all the same (the commit happened, its answer was
     * lost): the caller is told the start failed, so a run stored anyway must not hold the thread — it ends
     * FAILED at once. When the store cannot say, it is asked again shortly. Until then the run is held here
     * (among the active runs, so its lease is renewed and no other instance takes it over and runs it); a run
     * that was not stored leaves them, and one another instance holds after all (this one's renewals lapsed)
     * was let go by the renewal.
     */
    private void endIfStoredAnyway(ActiveRun created, ChatException failure) {
        String runId = created.runId();
        if (created.isAbandoned() || created.hasEnded()) {
            return;
        }
        Optional<Run> stored;
        try {
            stored = ctx.store.findRun(runId);
        } catch (RuntimeException unreadable) {
            ctx.timers.schedule(() -> endIfStoredAnyway(created, failure), 1, java.util.concurrent.TimeUnit.SECONDS);
            return;
        }
        if (stored.isEmpty() || stored.get().status().isTerminal()) {
            ctx.activeRuns.remove(runId, created);
            return;
        }
        log.warn("Run {}: its start failed ({}), but the store holds it; ending it", runId, failure.getMessage());
        created.end(new dev.parley.chat.event.AgentStreamEvent.RunFailed(ErrorCode.STORE_FAILURE.name(),
                "the store failed while the run was starting; it did not start"));
    }

    /**
     * Deletes a thread for good: no run starts on it here from the moment this is called, and none of its
     * runs writes anything after it is deleted. With {@code stopRunsFirst}, its runs (here and on other
     * instances) are stopped first and given up to {@code patience} to end; runs that still have not ended
     * here are ended by the engine before the delete. Without it, a thread with a run is a CONFLICT.
     * A run another instance starts meanwhile is refused by the store (the thread is gone).
     *
     * @return false if the thread did not exist
     */
    public boolean deleteThread(String threadId, boolean stopRunsFirst, Duration patience) {
        synchronized (ctx.lanes) {
            if (!stopRunsFirst && (ctx.lanes.isBusy(threadId) || !ctx.store.findThreadRuns(threadId, ACTIVE).isEmpty())) {
                throw ChatException.conflict("the thread has an active run; cancel it before deleting the thread");
            }
            deleting.merge(threadId, 1, Integer::sum);
        }
        try {
            Optional<ChatThread> thread = ctx.store.findThread(threadId);
            if (stopRunsFirst) {
                stopThread(threadId, patience);
                endRunsHeldHere(threadId);
            }
            boolean deleted;
            try {
                deleted = ctx.store.deleteThread(threadId);
            } catch (RuntimeException e) {
                if (thread.isEmpty() || !goneAfterAll(thread.get())) {
                    throw e;
                }
                log.warn("Thread {}: its delete failed ({}), but the store no longer holds it", threadId, e.toString());
                deleted = true;
            }
            thread.ifPresent(this::tellRuntimeDeleted);
            return deleted;
        } finally {
            synchronized (ctx.lanes) {
                deleting.computeIfPresent(threadId, (id, n) -> n == 1 ? null : n - 1);
            }
        }
    }

    /**
     * Whether a thread whose delete call failed is gone all the same (the commit happened, its answer was
     * lost): then the delete counts, and the runtime must forget the conversation too. False if the store
     * cannot say. A thread another owner opened under the freed id since is not the deleted one.
     */
    private boolean goneAfterAll(ChatThread thread) {
        try {
            return ctx.store.findThread(thread.id())
                    .filter(now -> now.createdAt().equals(thread.createdAt()) && now.ownerId().equals(thread.ownerId()))
                    .isEmpty();
        } catch (RuntimeException unreadable) {
            return false;
        }
    }

    private void tellRuntimeDeleted(ChatThread thread) {
        tellRuntimeDeleted(thread.id(), RunRequest.conversationKey(thread.id(), thread.createdAt()), 1);
    }

    /**
     * Tells the runtime to forget a deleted thread's conversation (its files, its remembered approvals). A
     * runtime that cannot take it now (a Bridge that is down) is told again, after 1, 2, 4 and 8 s, while this
     * engine runs; the attempts are not stored, so a restart in between ends them (logged as an error, like
     * the last failed attempt).
     */
    private void tellRuntimeDeleted(String threadId, String conversationKey, int attempt) {
        try {
            ctx.runtime.threadDeleted(conversationKey);
            return;
        } catch (RuntimeException e) {
            if (attempt >= FORGET_ATTEMPTS || isClosing()) {
                log.error("Thread {} is deleted, but the runtime could not forget it ({} attempts): {}", threadId,
                        attempt, e.toString());
                return;
            }
            long delaySeconds = 1L << (attempt - 1);
            log.warn("Thread {} is deleted, but the runtime could not forget it yet ({}); trying again in {} s",
                    threadId, e.toString(), delaySeconds);
            try {
                ctx.timers.schedule(() -> tellRuntimeDeleted(threadId, conversationKey, attempt + 1), delaySeconds,
                        java.util.concurrent.TimeUnit.SECONDS);
            } catch (RuntimeException closing) {
                log.error("Thread {} is deleted, but the runtime could not forget it, and the engine is closing",
                        threadId);
            }
        }
    }

    /** Ends the thread's runs still held here (they did not stop in time) and waits briefly for their ends. */
    private void endRunsHeldHere(String threadId) {
        List<ActiveRun> left = ctx.activeRuns.values().stream().filter(r -> r.threadId().equals(threadId)).toList();
        for (ActiveRun run : left) {
            run.forceEnd(RunStatus.CANCELLED, "the thread is being deleted");
        }
        for (ActiveRun run : left) {
            run.awaitThreadFreed(ENDING_RUN_WAIT_MILLIS);
        }
    }

    /**
     * Waits (at most {@value #ENDING_RUN_WAIT_MILLIS} ms) while the thread's run here has logged its end but
     * not yet freed the thread. A run frees its thread only after its end is stored, and a subscriber that
     * follows the run from the store (on the instance that took the run over) sees that end first: a person
     * who saw the end and sends the next message at once must get a run, not a conflict.
     */
    private void awaitEndingRun(String threadId) {
        ActiveRun current;
        synchronized (ctx.lanes) {
            current = closing ? null : ctx.lanes.current(threadId);
        }
        if (current != null && current.hasEnded()) {
            current.awaitThreadFreed(ENDING_RUN_WAIT_MILLIS);
        }
    }

    /**
     * The thread is busy: the double-texting rule's refusal. The store's one-active-run rule gives the
     * same answer when another instance started a run on the thread in the meantime.
     */
    private static ChatException busyThread(DoubleTexting strategy) {
        return ChatException.conflict(strategy == DoubleTexting.REJECT
                ? "the thread already has an active run; wait for it, or cancel it"
                : "the thread's active run is held by another host instance");
    }

    /**
     * Runs {@code follow} (the call that follows a recovered or taken-over run again in the runtime) in the
     * run's context restored on this thread ({@link dev.parley.chat.engine.RunContextPropagator#resume}), linked
     * to the one it was started in when {@code startHeaders} holds it. A queued run gets its context at launch
     * instead ({@link #resumeQueuedContext}).
     */
    void followInOwnContext(ActiveRun run, Map<String, String> startHeaders, Runnable follow) {
        contexts.resume(run.snapshot(), startHeaders);
        contexts.wrap(run.runId(), follow).run();
    }

    /** Restores the context of a recovered queued run on this thread, to be opened around its launch. */
    void resumeQueuedContext(ActiveRun run, Map<String, String> startHeaders) {
        contexts.resume(run.snapshot(), startHeaders);
    }

    /** Whether runs keep the context they were started in (a propagator is set): recovery reads it then. */
    boolean keepsStartContexts() {
        return contexts.active();
    }

    /**
     * Keeps the headers of the context a run was started in with the run, for a later recovery to link to. A
     * failing write is logged and changes nothing else: the run goes on, and if followed again it is not linked.
     */
    private void keepStartContext(String runId, Map<String, String> headers) {
        if (headers.isEmpty()) {
            return;
        }
        try {
            ctx.store.saveStartContext(runId, headers);
        } catch (RuntimeException e) {
            log.warn("Run {}: keeping the context it was started in failed ({}); if it is followed again after a"
                    + " restart, its trace is not linked to this one", runId, e.toString());
        }
    }

    /** Hands a run's launch to a worker; a refused hand-off ends the run. */
    void launch(ActiveRun run) {
        try {
            ctx.work.execute(contexts.wrap(run.runId(), run::launch));
        } catch (RuntimeException e) {
            run.launchRefused(e);
        }
    }

    @Override
    public void runEnded(ActiveRun run) {
        contexts.drop(run.runId());
        releaseLane(run);
    }

    @Override
    public void leaseLost(ActiveRun run) {
        cluster.letGo(run.runId(), "another instance holds its lease");
    }

    @Override
    public boolean startUnlessClosing(Runnable markStarted) {
        synchronized (ctx.lanes) {
            if (closing) {
                return false;
            }
            markStarted.run();
            return true;
        }
    }

    boolean isClosing() {
        synchronized (ctx.lanes) {
            return closing;
        }
    }

    /** Frees the run's thread: the next queued run starts, unless the engine is closing (it stays queued). */
    void releaseLane(ActiveRun run) {
        ActiveRun next;
        boolean engineClosing;
        synchronized (ctx.lanes) {
            next = ctx.lanes.release(run.threadId(), run);
            engineClosing = closing;
        }
        run.threadFreed();
        if (engineClosing) {
            return;
        }
        if (next != null) {
            launch(next);
        }
    }

    /**
     * Stops a run. A queued run ends CANCELLED at once; an active one as soon as the runtime stops. A run
     * held by another instance is stopped there (through the coordinator), on the same path.
     */
    public Run cancel(Run run) {
        ActiveRun active = ctx.activeRuns.get(run.id());
        if (active == null) {
            if (ctx.clustered() && !run.status().isTerminal()) {
                ctx.coordinator.send(new ControlMessage(ControlMessage.Kind.CANCEL, run.id(),
                        UUID.randomUUID().toString(), ctx.coordinator.instanceId(), null, null));
            }
            return run;
        }
        cancelHere(active);
        return active.published();
    }

    /**
     * The one path of a cancel for a run this instance holds, whoever asked (a caller here, or another
     * instance): a queued run leaves its thread's queue and ends CANCELLED; a started one is stopped.
     */
    void cancelHere(ActiveRun active) {
        boolean wasQueued;
        synchronized (ctx.lanes) {
            wasQueued = ctx.lanes.dequeue(active.threadId(), active);
        }
        if (wasQueued) {
            active.end(new dev.parley.chat.event.AgentStreamEvent.RunFinished(RunStatus.CANCELLED,
                    "cancelled before it started"));
        } else {
            active.cancel();
        }
    }

    /**
     * Delivers an answer to a pending input once; see {@link dev.parley.chat.engine.ChatEngine#answer}. The
     * answer's shape was checked against the input by the caller. Answers to one input are taken one at a
     * time on this instance, so that a caller told REPLAYED knows the identical answer before it reached
     * the runtime (had its delivery failed, this caller's answer would have been delivered instead).
     */
    public AnswerResult answer(Run run, PendingInput input, InputAnswer answer) {
        ReentrantLock inputLock = answerLocks[Math.floorMod((run.id() + '/' + input.inputId()).hashCode(),
                answerLocks.length)];
        inputLock.lock();
        try {
            return answerNow(run, input, answer);
        } finally {
            inputLock.unlock();
        }
    }

    private AnswerResult answerNow(Run run, PendingInput input, InputAnswer answer) {
        String inputId = input.inputId();
        AnswerOutcome outcome = storeAnswer(run.id(), inputId, answer);
        switch (outcome) {
            case NOT_FOUND:
                throw ChatException.notFound("input", inputId);
            case CONFLICT:
                throw ChatException.conflict(switch (ctx.store.findInput(run.id(), inputId).map(PendingInput::state)
                        .orElse(InputState.CANCELLED)) {
                    case EXPIRED -> "the input expired; the run no longer waits for it";
                    case ANSWERED -> "the input was already answered differently";
                    default -> "the input was withdrawn; the run no longer waits for it";
                });
            default:
                break;
        }
        // REPLAYED: the same answer is stored. It may never have reached the runtime (an earlier call's store
        // write took effect, but its answer was lost): while the run still waits for it, it is delivered now.
        boolean replayed = outcome == AnswerOutcome.REPLAYED;
        ActiveRun active = ctx.activeRuns.get(run.id());
        if (active == null && ctx.clustered() && !run.status().isTerminal()) {
            return cluster.answerElsewhere(run, inputId, replayed);
        }
        if (active == null && !hasEnded(run.id())) {
            // left by the last process and not followed again yet (its recovery is under way or retried shortly):
            // nothing can reach the runtime now. A fresh answer is taken back for the retry; a replayed one stays
            // (an earlier process may have delivered it: it is not delivered twice)
            if (!replayed) {
                takeBackAnswer(run.id(), inputId, null);
            }
            throw new ChatException(ErrorCode.RUNTIME_UNAVAILABLE, "the run is not followed yet (it is being "
                    + "recovered after a restart); send the answer again shortly");
        }
        if (active == null || active.hasEnded()) {
            if (replayed) {
                return AnswerResult.REPLAYED;
            }
            takeBackAnswer(run.id(), inputId, active);
            throw ChatException.conflict("the run no longer waits for this answer");
        }
        ActiveRun.Delivery delivery;
        try {
            delivery = active.deliverAnswer(input, answer);
        } catch (RuntimeException e) {
            if (replayed && active.hasEnded()) {
                return AnswerResult.REPLAYED;
            }
            takeBackAnswer(run.id(), inputId, active);
            throw e instanceof ChatException ? (ChatException) e
                    : new ChatException(ErrorCode.RUNTIME_UNAVAILABLE, "the answer could not reach the runtime", e);
        }
        if (delivery == ActiveRun.Delivery.ALREADY_ANSWERED) {
            if (replayed) {
                return AnswerResult.REPLAYED;
            }
            throw ChatException.conflict("the input was already answered");
        }
        return replayed ? AnswerResult.REPLAYED : AnswerResult.ACCEPTED;
    }

    /** Whether the stored run has ended (or is gone); a store that cannot say fails the call. */
    private boolean hasEnded(String runId) {
        return StoreRetry.call(() -> ctx.store.findRun(runId)).map(r -> r.status().isTerminal()).orElse(true);
    }

    /**
     * Stores the answer. A store call that fails may have taken effect all the same (its commit happened, its
     * answer was lost): what the store holds is read back, and the same answer found stored is REPLAYED.
     */
    private AnswerOutcome storeAnswer(String runId, String inputId, InputAnswer answer) {
        try {
            return ctx.store.answerInput(runId, inputId, answer, ctx.now());
        } catch (ChatException e) {
            if (e.code() != ErrorCode.STORE_FAILURE) {
                throw e;
            }
            Optional<PendingInput> stored;
            try {
                stored = ctx.store.findInput(runId, inputId);
            } catch (RuntimeException unreadable) {
                throw e;
            }
            if (stored.filter(p -> p.state() == InputState.ANSWERED && answer.equals(p.answer())).isPresent()) {
                return AnswerOutcome.REPLAYED;
            }
            throw e;
        }
    }

    /**
     * Takes back an accepted answer that did not reach its asker: the input is pending again, or, once its
     * run has ended, CANCELLED (the run's end closes the inputs still pending, and this answer may come
     * after that).
     *
     * @param active the run while it is held here, null when it is not
     */
    void takeBackAnswer(String runId, String inputId, @Nullable ActiveRun active) {
        try {
            StoreRetry.run(() -> ctx.store.reopenInput(runId, inputId));
        } finally {
            boolean ended = active != null ? active.hasEnded() : hasEnded(runId);
            if (ended) {
                StoreRetry.call(() -> ctx.store.closeInput(runId, inputId, InputState.CANCELLED, ctx.now()));
            }
        }
    }

    /** The run's status, newest seq and pending inputs. */
    public RunState state(Run run) {
        ActiveRun active = ctx.activeRuns.get(run.id());
        if (active != null) {
            return active.state();
        }
        return new RunState(run, ctx.store.lastSeq(run.id()), ctx.store.listPendingInputs(run.id()));
    }

    /** A cold publisher of the run's events after {@code afterSeq}; each subscriber reads on its own. */
    public Flow.Publisher<RunEvent> subscribe(String runId, long afterSeq) {
        return subscriber -> {
            LiveSubscription subscription = new LiveSubscription(ctx, runId, afterSeq, subscriber);
            subscriber.onSubscribe(subscription);
            subscription.start();
        };
    }

    // ------------------------------------------------------------------ restart

    /**
     * Brings the store in line after a restart: a run that was RUNNING or waiting for an answer is
     * re-attached when the runtime can (from where its stored events reach), else stopped in the runtime and
     * INTERRUPTED; QUEUED runs start in order ({@link RunRecovery}). With other instances, only runs whose
     * lease expired are taken over.
     */
    public void recover() {
        if (ctx.clustered()) {
            cluster.reapExpired();
        } else {
            recovery.recoverAll();
        }
    }

    static final EnumSet<RunStatus> ACTIVE =
            EnumSet.of(RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.WAITING_FOR_INPUT);

    /** Starts this instance's part with the others ({@link ClusterDuties#start}). */
    public void startCoordination() {
        cluster.start();
    }

    /**
     * Ends this process's part. Where the runtime can re-attach, runs it carries on are left for the next
     * engine, which follows them from where the store leaves them: runs waiting for an answer, and running
     * runs whose stream said where it stands (unless a tool the host side answers is running); never a run that
     * offers tools the person's browser runs (they are not stored: a re-attached run calling one would wait for
     * good). Their stream
     * is closed, which does not stop them in the runtime; the last flush stores their resume points with
     * their events. Queued runs stay queued. With other instances, the leases of the runs left (and of those
     * stopped here, in case their end could not be stored) are released, and no longer renewed, so that one of
     * them takes the runs over at once; alone, the next start of the host does. Every other
     * run is stopped in the runtime (all at once, waiting at most the cancel grace period; what its stream
     * says meanwhile is not logged) and INTERRUPTED.
     * With other instances, a run whose lease another instance took over (this one's lapsed unnoticed) is let
     * go instead: neither stopped nor ended here. Every subscriber still open is told the engine closed (an
     * error, after every event it was owed from this engine's memory), so it can subscribe again from its cursor.
     */
    public void close() {
        synchronized (ctx.lanes) {
            closing = true;
        }
        List<String> leftBehind = new ArrayList<>();
        List<ActiveRun> interrupted = new ArrayList<>();
        for (ActiveRun run : new ArrayList<>(ctx.activeRuns.values())) {
            if (run.isFinished()) {
                continue;
            }
            if (run.leaveForNextEngine()) {
                leftBehind.add(run.runId());
                continue;
            }
            if (run.snapshot().status() == RunStatus.QUEUED) {
                leftBehind.add(run.runId());
                continue;
            }
            interrupted.add(run);
        }
        letGoOfRunsTakenOver(interrupted);
        interrupted.forEach(ActiveRun::detach);
        OrphanStops.stopAllThenInterrupt(ctx, interrupted, "the host shut down while the run was active");
        ctx.writer.close();
        ctx.markClosed();
        new ArrayList<>(ctx.subscriptions).forEach(LiveSubscription::engineClosing);
        if (ctx.clustered()) {
            List<String> released = new ArrayList<>(leftBehind);
            interrupted.forEach(run -> released.add(run.runId()));
            cluster.releaseLeases(released);
        }
    }

    /**
     * Removes from {@code runs}, and lets go of, those another instance holds now (this engine's lease lapsed
     * unnoticed), read from the store as the closing engine renews their leases: they are neither stopped nor
     * ended here. Where the store cannot tell, the runs stay this engine's to stop.
     */
    private void letGoOfRunsTakenOver(List<ActiveRun> runs) {
        if (!ctx.clustered() || runs.isEmpty()) {
            return;
        }
        Set<String> held;
        try {
            held = ctx.store.leaseRuns(ctx.coordinator.instanceId(), runs.stream().map(ActiveRun::runId).toList(),
                    ctx.leaseEnd());
        } catch (RuntimeException e) {
            log.warn("The leases of {} run(s) could not be read while closing; stopping them here", runs.size(), e);
            return;
        }
        runs.removeIf(run -> {
            if (held.contains(run.runId())) {
                return false;
            }
            cluster.letGo(run.runId(), "another instance took it over before this one closed");
            return true;
        });
    }
}
