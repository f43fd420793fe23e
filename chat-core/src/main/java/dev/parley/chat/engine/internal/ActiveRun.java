package dev.parley.chat.engine.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.engine.HostActionScope;
import dev.parley.chat.engine.RunState;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.ErrorInfo;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.reduce.RunReducer;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadTouch;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run while it lives in this process: its log, its reducer, its connection to the runtime and the
 * work waiting for the batch writer.
 *
 * <p>Everything that changes the run goes through {@link #ingest}: it numbers the event, folds it into
 * the reducer, adds it to the log and queues it for the store under the run's lock, then makes it
 * visible to subscribers. Input requests and terminal events are stored before they become visible.
 * Events may come from the runtime's stream thread, from host-action workers and from API callers
 * (cancel, answers); the lock keeps one order.
 *
 * <p>Every run that started ends: each piece of its work runs {@linkplain #guarded guarded} (whatever it
 * throws ends the run FAILED), an event that cannot be logged ends it FAILED, and the terminal event
 * itself cannot fail (see {@link #end}). The end frees the thread's lane at once; the run leaves memory
 * once the batch writer has stored its end.
 */
public final class ActiveRun {
    private static final Logger log = LoggerFactory.getLogger(ActiveRun.class);

    private final EngineContext ctx;
    private final String runId;
    private final String threadId;
    private final List<Message> initialMessages;
    private final RunReducer reducer = new RunReducer();
    private final RunLog runLog;
    private final RunHost host;
    private final ToolRunner tools;
    private final RunInputs inputs;
    /** Keeps one order between the runtime's stream and the engine's own events (answers). */
    private final ReentrantLock order = new ReentrantLock();

    // guarded by this
    private Run run;
    private long lastSeq;
    private final RunWrites writes;
    /** Where the runtime's stream stands, for following the run again after a restart. */
    private final ResumeTracker resume;
    private boolean terminalAppended;
    /** A snapshot of the run's messages is in its log (announced, or replayed): an end needs none of its own. */
    private boolean snapshotLogged;
    /** The seq of the terminal event once logged (0 before): the run leaves memory once it is stored. */
    private long terminalSeq;
    private boolean endStored;
    private boolean endShown;
    /** The run's final record and last seq, set at its end; shown once the end is stored. */
    private @Nullable Run ending;
    private long endingSeq;
    private boolean endVisible;
    private boolean inputsClosedAfterEnd;
    /** The run's own end flush is under way: it closes the inputs itself once the end is stored. */
    private boolean flushingEnd;
    private long syncSeq;
    private @Nullable ScheduledFuture<?> cancelTimer;
    /** Counted down once the run no longer holds its thread ({@link #threadFreed}). */
    private final CountDownLatch threadFreed = new CountDownLatch(1);

    /** The record callers see: it changes only once what it shows is stored and visible. */
    private volatile Run published;
    /** The pending inputs callers see, changed with {@link #published}'s rule. */
    private volatile List<PendingInput> publishedInputs = List.of();
    private volatile Flow.@Nullable Subscription upstream;
    private volatile boolean cancelRequested;
    private volatile boolean finished;
    private volatile boolean detached;
    /** Recovered to be continued from the store, and not yet followed: answers wait until it is. */
    private volatile boolean awaitingResume;
    private volatile boolean abandoned;
    /** The run's thread was deleted: nothing of it is stored any more, its end is shown as it is. */
    private volatile boolean threadDeleted;
    /** The run continues a runtime session, or reported a new one: its answer is then the session's head. */
    private volatile boolean continuesSession;

    /**
     * @param baseSeq the seq after which this process numbers events (0 for a new run; after a restart,
     *     above every seq a client may hold)
     * @param initialMessages the user message (if any) and the assistant placeholder, announced first
     */
    ActiveRun(EngineContext ctx, Run run, List<Message> initialMessages, long baseSeq, long reservedSeq, RunHost host) {
        this(ctx, run, initialMessages, baseSeq, reservedSeq, host, List.of());
    }

    /** @param clientTools tools the person's browser runs for this run */
    ActiveRun(EngineContext ctx, Run run, List<Message> initialMessages, long baseSeq, long reservedSeq, RunHost host,
            List<HostToolSpec> clientTools) {
        this.ctx = ctx;
        this.run = run;
        this.published = run;
        this.runId = run.id();
        this.threadId = run.threadId();
        this.initialMessages = List.copyOf(initialMessages);
        this.lastSeq = baseSeq;
        this.writes = new RunWrites(ctx, runId, reservedSeq);
        this.resume = new ResumeTracker(runId, ctx.can(Capability.REATTACH) && clientTools.isEmpty(), baseSeq);
        this.runLog = new RunLog(runId, EngineContext.RING_CAPACITY,
                Math.min(ctx.limits.subscriberLagLimit(), EngineContext.READER_RING_CAPACITY), baseSeq);
        this.host = host;
        this.tools = new ToolRunner(ctx, this, clientTools,
                new HostActionScope(run.ownerId(), run.threadId(), run.id()));
        this.inputs = new RunInputs(ctx, this);
    }

    public String runId() {
        return runId;
    }

    public String threadId() {
        return threadId;
    }

    RunLog log() {
        return runLog;
    }

    /** True once the terminal event is logged (it may not be stored yet). */
    boolean isFinished() {
        return finished;
    }

    /** True once another instance took the run over and this one dropped it. */
    boolean isAbandoned() {
        return abandoned;
    }

    boolean isDetached() {
        return detached;
    }

    boolean isCancelRequested() {
        return cancelRequested;
    }

    /** The run's record as it stands inside the engine (status and usage from the reducer). */
    public synchronized Run snapshot() {
        return currentRecord();
    }

    /**
     * The run's record as callers may see it: a status change shows only once it is stored and its
     * event is visible to subscribers.
     */
    public Run published() {
        return published;
    }

    synchronized long lastSeq() {
        return lastSeq;
    }

    /**
     * What callers may see of the run, read at one instant: the published record, the newest visible seq
     * and the pending inputs as of that seq. An input request is visible only once it is stored, and the
     * seq shown never runs ahead of it, so a caller that reads the state and then subscribes after its seq
     * sees every input that is not in the state.
     */
    synchronized RunState state() {
        long visible = syncSeq > 0 ? Math.min(lastSeq, syncSeq - 1) : lastSeq;
        return new RunState(published, visible, publishedInputs);
    }

    /** The run's messages as the reducer holds them now, in order of first appearance. */
    synchronized List<Message> messages() {
        return reducer.messages();
    }

    /** Every input waiting for the person, oldest first, as far as callers may see them (stored and visible). */
    List<PendingInput> pendingInputs() {
        return publishedInputs;
    }

    synchronized boolean isInputPending(String inputId) {
        return reducer.isPending(inputId);
    }

    RunInputs inputs() {
        return inputs;
    }

    /** A recovered run's pending inputs: their deadlines start again. */
    void resumeDeadlines(List<PendingInput> pending) {
        pending.forEach(input -> inputs.requested(input.inputId(), input.deadline()));
    }

    /**
     * Feeds stored events into the reducer (after a restart) without logging them again. The messages they
     * fold into are stored with the run's next batch: the previous process stored its messages only every
     * {@code messageFlushInterval}, so the stored ones may lag its stored events (a step may be missing),
     * also for a run that goes on waiting for an answer.
     */
    synchronized void replayStored(List<RunEvent> events) {
        for (RunEvent event : events) {
            reducer.apply(event);
            snapshotLogged |= event.event() instanceof AgentStreamEvent.MessagesSnapshot;
        }
        writes.messagesNow();
        publishedInputs = reducer.pendingInputs();
        ctx.writer.markDirty(this, 0);
    }

    synchronized RunStatus reducedStatus() {
        return reducer.status();
    }

    // ------------------------------------------------------------------ starting

    /** Starts the run: announces it, then subscribes to the runtime. Runs on a worker thread. */
    void launch() {
        guarded(() -> {
            boolean started = host.startUnlessClosing(() -> {
                synchronized (this) {
                    run = run.started(ctx.now());
                    writes.runChanged();
                    published = run;
                }
            });
            if (!started) {
                log.info("Run {}: the engine closed before it started; it stays queued for the next one", runId);
                return;
            }
            announce();
            ctx.suggestions.runStarted(threadId);
            ctx.listener.runStarted(snapshot());
            if (cancelRequested) {
                end(new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "stopped before it started"));
            }
            if (hasEnded()) {
                return;
            }
            RuntimeRequests.Prepared prepared = RuntimeRequests.prepare(ctx, snapshot(), initialMessages,
                    tools.hostActions().values(), tools.clientTools());
            continuesSession = prepared.continuesSession();
            RunRequest request = prepared.request();
            Flow.Publisher<AgentStreamEvent> stream = run.isRegeneration()
                    ? ctx.runtime.retry(request)
                    : ctx.runtime.generateResponse(request);
            stream.subscribe(new RuntimeStream(ctx, this));
        });
    }

    /** The engine could not hand the launch to a worker (a full pool, a shutdown): the run fails. */
    void launchRefused(RuntimeException why) {
        withMdc(() -> {
            log.error("Run {} could not be started", runId, why);
            end(new AgentStreamEvent.RunFailed("INTERNAL", "the engine could not start the run: " + message(why)));
        });
    }

    /**
     * Re-attaches to a run the runtime carries on (streaming, or waiting for an answer) after this host
     * restarted: the stream continues after {@code resumeToken}, and its first {@code skip} items, which the
     * log holds already, are skipped.
     */
    void reattach(String resumeToken, long skip) {
        guarded(() -> {
            synchronized (this) {
                resume.resumeAt(resumeToken, skip);
            }
            RuntimeRequests.Prepared prepared = RuntimeRequests.prepare(ctx, snapshot(), initialMessages,
                    tools.hostActions().values(), tools.clientTools());
            continuesSession = prepared.continuesSession();
            ctx.runtime.reattach(prepared.request(), resumeToken).subscribe(new RuntimeStream(ctx, this));
        });
    }

    /**
     * After a restart, for a runtime that continues runs from the store ({@link Capability#RESUME}): if the run
     * waits only for approvals the engine asked (of {@code pending}, as stored), each is waited for again and
     * the run is to be continued with {@link #resumeFromStore}. Called before the run is shared.
     *
     * @return false (nothing done) if the run cannot be continued so
     */
    boolean awaitApprovalsAgain(List<PendingInput> pending) {
        List<Message> messages = messages();
        if (!ctx.can(Capability.RESUME)
                || !RunResumption.waitsOnlyForEngineApprovals(messages, pending, tools.hostActions())) {
            return false;
        }
        RunResumption.openCalls(messages).forEach(tools::awaitApprovalAgain);
        awaitingResume = true;
        return true;
    }

    /**
     * Continues the run in the runtime from what is stored ({@link #awaitApprovalsAgain}). Under the order
     * lock, so that no answer is delivered before the runtime's stream is there to take its result.
     */
    void resumeFromStore() {
        guarded(() -> {
            order.lock();
            try {
                RuntimeRequests.Prepared prepared = RuntimeRequests.prepare(ctx, snapshot(), initialMessages,
                        tools.hostActions().values(), tools.clientTools());
                continuesSession = prepared.continuesSession();
                Run now = snapshot();
                ctx.runtime.resume(prepared.request(), RunResumption.progress(messages(), run.assistantMessageId(),
                        now.usage())).subscribe(new RuntimeStream(ctx, this));
                awaitingResume = false;
            } finally {
                order.unlock();
            }
        });
    }

    /** Logs the run's start (once): run_started and its first messages, with nothing in between. */
    void announce() {
        order.lock();
        try {
            if (reducedStatus() != RunStatus.QUEUED) {
                return;
            }
            // both under one hold of the order lock: an end that comes in between (the engine closing) must
            // not leave a log with the start but without the messages it announces
            if (ingest(new AgentStreamEvent.RunStarted(threadId, runId, run.assistantMessageId())) != null) {
                ingest(new AgentStreamEvent.MessagesSnapshot(threadId, runId, initialMessages, null));
            }
        } finally {
            order.unlock();
        }
    }

    // ------------------------------------------------------------------ the guarantee: every run ends

    /**
     * Runs a piece of the run's work on an engine or runtime thread. Whatever it throws ends the run
     * FAILED (with the exception's code when it is a {@link ChatException}, else INTERNAL), so that no
     * failure leaves a run without a terminal event.
     */
    void guarded(Runnable work) {
        withMdc(() -> {
            try {
                work.run();
            } catch (RuntimeException | Error e) {
                log.error("Run {}: the engine failed while working on it; ending it", runId, e);
                forceEnd(new AgentStreamEvent.RunFailed(code(e), message(e)));
                if (e instanceof VirtualMachineError) {
                    throw (VirtualMachineError) e;
                }
            }
        });
    }

    /**
     * Logs a terminal event (after the run's start if it was never announced) and ends the run. Never
     * throws: a terminal event does not wait for a seq reservation the store cannot give, and what
     * follows it is guarded. Ignored once the run has ended.
     */
    void end(AgentStreamEvent terminal) {
        order.lock();
        try {
            if (reducedStatus() == RunStatus.QUEUED) {
                append(new AgentStreamEvent.RunStarted(threadId, runId, run.assistantMessageId()), true);
            }
            if (!snapshotLogged()) {
                append(new AgentStreamEvent.MessagesSnapshot(threadId, runId, initialMessages, null), true);
            }
            append(terminal, true);
        } catch (RuntimeException | Error e) {
            log.error("Run {}: its end could not be logged; releasing its thread", runId, e);
            releaseAfterBrokenEnd();
        } finally {
            order.unlock();
        }
    }

    /** Last resort when even the terminal event could not be logged: the run leaves memory regardless. */
    private void releaseAfterBrokenEnd() {
        synchronized (this) {
            terminalAppended = true;
        }
        finished = true;
        try {
            host.runEnded(this);
        } finally {
            ctx.activeRuns.remove(runId, this);
        }
    }

    private synchronized boolean snapshotLogged() {
        return snapshotLogged;
    }

    /** True once the run's terminal event is logged (it is ending, or has ended). */
    synchronized boolean hasEnded() {
        return terminalAppended;
    }

    /** The engine freed the thread this run held (or the run left its thread's queue). */
    void threadFreed() {
        threadFreed.countDown();
    }

    /** Waits up to {@code millis} for {@link #threadFreed}; returns early, keeping the flag, if interrupted. */
    void awaitThreadFreed(long millis) {
        try {
            threadFreed.await(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String code(Throwable error) {
        return error instanceof ChatException ? ((ChatException) error).code().name() : "INTERNAL";
    }

    static String message(Throwable error) {
        return error.getMessage() != null ? error.getMessage() : error.getClass().getSimpleName();
    }

    // ------------------------------------------------------------------ the event path

    /**
     * Logs one event and applies its effects. Ignored after the terminal event. An event that cannot be
     * logged (its seq reservation failed) ends the run FAILED.
     *
     * @return the logged event, or null if it was ignored or could not be logged
     */
    @Nullable RunEvent ingest(AgentStreamEvent event) {
        return ingest(event, false);
    }

    /**
     * Logs one item of the runtime's stream as {@link #ingest} does, and counts it towards the stream's
     * resume point (it is in the log once the log is stored up to its seq).
     */
    @Nullable RunEvent ingestFromRuntime(AgentStreamEvent event) {
        return ingest(event, true);
    }

    private @Nullable RunEvent ingest(AgentStreamEvent event, boolean fromRuntime) {
        order.lock();
        try {
            return append(event, event.isTerminal(), fromRuntime);
        } catch (RuntimeException e) {
            log.error("Run {}: an event could not be logged; ending the run", runId, e);
            forceEnd(new AgentStreamEvent.RunFailed(code(e), "the engine could not log an event: " + message(e)));
            return null;
        } finally {
            order.unlock();
        }
    }

    /** An item of the runtime's stream that is not logged (the engine ignores it) counts all the same. */
    void runtimeItemLeftOut() {
        synchronized (this) {
            resume.handled(lastSeq);
        }
        ctx.writer.markDirty(this, 0);
    }

    /** True if this item of a re-attached stream is one the log holds already: it is skipped, uncounted. */
    synchronized boolean isStoredRuntimeItem() {
        return resume.skipStored();
    }

    /** The runtime's stream reported where it stands, after the items signalled so far. */
    void resumePoint(String resumeToken) {
        synchronized (this) {
            resume.resumePoint(resumeToken, lastSeq);
        }
        ctx.writer.markDirty(this, 0);
    }

    /**
     * True if another engine could follow this run from where its stored events reach: the runtime re-attaches,
     * the stream said where it stands, and no tool the person's browser runs is offered (those tools are not
     * stored, so a re-attached run that called one would wait for good).
     */
    private synchronized boolean followableElsewhere() {
        return resume.followable();
    }

    /** The token the runtime's stream reported last (it may name the run on the runtime's side), or null. */
    synchronized @Nullable String resumeToken() {
        return resume.token();
    }

    /** True if the run offers tools the person's browser runs (they live only in this engine's memory). */
    private boolean offersClientTools() {
        return !tools.clientTools().isEmpty();
    }

    /**
     * True while a host action or client tool the agent called has no result: such a run cannot be followed
     * after a restart (the result would not reach the runtime).
     */
    boolean runsHostTool() {
        List<String> running = new ArrayList<>();
        synchronized (this) {
            for (Message message : reducer.messages()) {
                if (message instanceof ActionExecutionMessage call && call.status() == MessageStatus.IN_PROGRESS) {
                    running.add(call.name());
                }
            }
        }
        // outside the run's lock: the first look-up may ask the host's sources
        return running.stream().anyMatch(name -> tools.hostActions().containsKey(name) || tools.isClientTool(name));
    }

    /** What {@link #deliverAnswer} did. */
    enum Delivery {
        /** The answer reached its asker and is logged. */
        DELIVERED,
        /** An earlier answer to the input reached its asker: nothing was delivered. */
        ALREADY_ANSWERED
    }

    /**
     * Hands an accepted answer to whoever asked for the input (the runtime, or the engine itself) and logs
     * it, with nothing from the runtime's stream in between: what the runtime does after the answer is
     * logged after the answer. An input reaches its asker at most once: one this run already logged an
     * answer to is not delivered again, whatever the store says (an instance that gave up waiting for a
     * delivery may have reopened it meanwhile).
     *
     * @throws ChatException CONFLICT if the run already ended or the input is closed; RUNTIME_UNAVAILABLE if
     *     the engine closed and left the run to the next one; UNSUPPORTED if the runtime cannot take answers
     *     of this kind; whatever the runtime throws
     */
    Delivery deliverAnswer(PendingInput input, InputAnswer answer) {
        order.lock();
        try {
            synchronized (this) {
                if (reducer.wasAnswered(input.inputId())) {
                    return Delivery.ALREADY_ANSWERED;
                }
            }
            if (hasEnded() || !isInputPending(input.inputId())) {
                throw ChatException.conflict("the run no longer waits for this answer");
            }
            if (detached) {
                throw new ChatException(ErrorCode.RUNTIME_UNAVAILABLE,
                        "the engine is closing; send the answer again shortly");
            }
            if (awaitingResume) {
                throw new ChatException(ErrorCode.RUNTIME_UNAVAILABLE, "the run is not followed yet (it is being "
                        + "recovered after a restart); send the answer again shortly");
            }
            runLog.showHeld();
            inputs.deliver(input, answer);
            return Delivery.DELIVERED;
        } finally {
            order.unlock();
        }
    }

    /** The runtime withdrew an input it asked for (or let it expire): the store stops taking answers to it. */
    void inputClosedByRuntime(AgentStreamEvent.InputResolved resolved) {
        InputState state = resolved.outcome() == AgentStreamEvent.InputOutcome.EXPIRED
                ? InputState.EXPIRED : InputState.CANCELLED;
        try {
            StoreRetry.call(() -> ctx.store.closeInput(runId, resolved.inputId(), state, ctx.now()));
        } catch (RuntimeException e) {
            log.warn("Run {}: input {} could not be closed in the store; it closes with the run", runId,
                    resolved.inputId(), e);
        }
    }

    /**
     * Numbers, folds, logs and queues one event, then publishes it. Called holding {@link #order}.
     *
     * @param ending true for the events that end a run: they are logged even if the store cannot reserve
     *     their seq (the seq still lies within one block of the stored mark)
     */
    private @Nullable RunEvent append(AgentStreamEvent event, boolean ending) {
        return append(event, ending, false);
    }

    /** @param fromRuntime the event is an item of the runtime's stream (it counts towards the resume point) */
    private @Nullable RunEvent append(AgentStreamEvent event, boolean ending, boolean fromRuntime) {
        RunEvent logged;
        boolean durableFirst = event instanceof AgentStreamEvent.InputRequested || event.isTerminal();
        boolean statusChanged;
        synchronized (this) {
            if (terminalAppended) {
                return null;
            }
            long seq = lastSeq + 1;
            writes.reserveFor(seq, ending);
            lastSeq = seq;
            RunStatus before = reducer.status();
            logged = new RunEvent(runId, seq, ctx.clock.millis(), event);
            reducer.apply(logged);
            snapshotLogged |= event instanceof AgentStreamEvent.MessagesSnapshot;
            runLog.add(logged);
            writes.event(logged);
            if (fromRuntime) {
                resume.handled(seq);
            }
            statusChanged = reducer.status() != before;
            if (statusChanged) {
                writes.runChanged();
            }
            if (durableFirst && syncSeq == 0) {
                syncSeq = seq;
            }
            if (event instanceof AgentStreamEvent.InputRequested ask) {
                writes.input(new PendingInput(runId, ask.inputId(), ask.messageId(), ask.request(), ask.deadline(),
                        ask.resumeToken(), InputState.PENDING, null, ctx.now(), null));
            } else if (event instanceof AgentStreamEvent.RuntimeSession) {
                continuesSession = true;
                writes.touch(new ThreadTouch(threadId, ((AgentStreamEvent.RuntimeSession) event).sessionId(),
                        null, null));
            } else if (event.isTerminal()) {
                terminalAppended = true;
                terminalSeq = seq;
                writes.messagesNow();
                writes.runChanged();
                writes.touch(new ThreadTouch(threadId, null, ctx.now(), null, null,
                        continuesSession ? run.assistantMessageId() : null));
            }
        }
        ctx.writer.markDirty(this, 1);
        ctx.listener.eventAppended(logged);

        if (durableFirst) {
            runLog.showHeld();
        }
        if (event.isTerminal()) {
            finish();
        } else if (durableFirst) {
            if (!ctx.writer.flushRun(this)) {
                log.error("Run {}: the input request could not be stored; showing it anyway", runId);
            }
            synchronized (this) {
                syncSeq = 0;
                publishedInputs = reducer.pendingInputs();
                if (statusChanged) {
                    published = currentRecord();
                }
            }
            publish(event, statusChanged, false);
            AgentStreamEvent.InputRequested ask = (AgentStreamEvent.InputRequested) event;
            inputs.requested(ask.inputId(), ask.deadline());
        } else {
            publish(event, statusChanged, !statusChanged);
            if (event instanceof AgentStreamEvent.ToolCallEnd) {
                toolCallEnded(((AgentStreamEvent.ToolCallEnd) event).executionId());
            }
        }
        return logged;
    }

    /** @param holdable the subscribers may be woken for it at the end of the runtime's burst */
    private void publish(AgentStreamEvent event, boolean statusChanged, boolean holdable) {
        long visible;
        synchronized (this) {
            visible = syncSeq > 0 ? Math.min(lastSeq, syncSeq - 1) : lastSeq;
            if (statusChanged && syncSeq == 0) {
                published = currentRecord();
            }
            if (syncSeq == 0 && (event instanceof AgentStreamEvent.InputRequested
                    || event instanceof AgentStreamEvent.InputResolved)) {
                publishedInputs = reducer.pendingInputs();
            }
        }
        runLog.publish(visible, holdable);
    }

    /**
     * After the terminal event: stores it (retried by the batch writer if the store fails now), frees the
     * thread, then shows the end once it is stored ({@link #showEndOnceStored}). The run leaves memory once
     * its end is stored and shown.
     */
    private void finish() {
        synchronized (this) {
            if (cancelTimer != null) {
                cancelTimer.cancel(false);
            }
        }
        synchronized (this) {
            flushingEnd = true;
        }
        if (!ctx.writer.flushRun(this)) {
            log.error("Run {}: its end could not be stored yet; the batch writer keeps trying", runId);
        }
        boolean closeInputsNow;
        synchronized (this) {
            flushingEnd = false;
            closeInputsNow = endStored && !inputsClosedAfterEnd;
            inputsClosedAfterEnd |= closeInputsNow;
        }
        if (closeInputsNow) {
            closePendingInputs(0);
        }
        inputs.close();
        long last;
        Run done;
        synchronized (this) {
            syncSeq = 0;
            last = lastSeq;
            done = currentRecord();
        }
        finished = true;
        ctx.suggestions.runEnded(done);
        try {
            host.runEnded(this);
        } catch (RuntimeException e) {
            log.error("Run {}: releasing its thread failed", runId, e);
        }
        synchronized (this) {
            ending = done;
            endingSeq = last;
        }
        if (!showEndOnceStored()) {
            log.warn("Run {}: its end is shown once it is stored", runId);
        }
        Flow.Subscription stream = upstream;
        if (stream != null && cancelRequested) {
            cancelQuietly(stream);
        }
        ctx.listener.runFinished(done);
    }

    /** Closes the inputs the ended run left pending, tried again later while the store refuses. */
    private void closePendingInputs(int failures) {
        try {
            StoreRetry.run(() -> ctx.store.cancelPendingInputs(runId, ctx.now()));
        } catch (RuntimeException e) {
            if (threadDeleted || failures >= 30) {
                log.error("Run {}: closing its pending inputs failed; giving up", runId, e);
                return;
            }
            log.warn("Run {}: closing its pending inputs failed; trying again shortly", runId, e);
            try {
                ctx.timers.schedule(() -> closePendingInputs(failures + 1), Math.min(30, 1L << failures),
                        TimeUnit.SECONDS);
            } catch (RuntimeException closing) {
                log.warn("Run {}: its pending inputs stay open until the next engine ends them", runId);
            }
        }
    }

    private void cancelQuietly(Flow.Subscription stream) {
        try {
            stream.cancel();
        } catch (RuntimeException e) {
            log.warn("Run {}: the runtime's stream threw when cancelled", runId, e);
        }
    }

    /** Fails the run because its stream or the runtime call failed. */
    void fail(Throwable error) {
        if (!(error instanceof ChatException)) {
            log.warn("Run {} failed", runId, error);
        }
        end(new AgentStreamEvent.RunFailed(error instanceof ChatException ? code(error) : "RUNTIME_FAILED",
                message(error)));
    }

    /**
     * The runtime's stream started: keeps its subscription for cancelling.
     *
     * @return false if the run ended or was detached meanwhile (the subscription is cancelled)
     */
    boolean attachUpstream(Flow.Subscription subscription) {
        upstream = subscription;
        if (hasEnded() || detached) {
            cancelQuietly(subscription);
            return false;
        }
        return true;
    }

    // ------------------------------------------------------------------ stopping

    /**
     * Stops the run: through the runtime when it can cancel (its stream then ends CANCELLED), else by
     * closing the stream. If the run has not ended within the grace period — the runtime did not
     * confirm, or its stream never started — the engine ends it itself.
     */
    void cancel() {
        cancelRequested = true;
        if (hasEnded()) {
            return;
        }
        Flow.Subscription stream = upstream;
        if (stream != null && !ctx.can(Capability.CANCEL)) {
            forceEnd(RunStatus.CANCELLED, "stopped on request");
            return;
        }
        if (stream != null) {
            try {
                ctx.runtime.cancel(runId);
            } catch (RuntimeException e) {
                log.warn("Run {}: the runtime refused the cancel ({}); closing the stream", runId, e.getMessage());
                forceEnd(RunStatus.CANCELLED, "stopped on request");
                return;
            }
        }
        synchronized (this) {
            if (!terminalAppended && cancelTimer == null) {
                cancelTimer = ctx.timers.schedule(
                        () -> forceEnd(RunStatus.CANCELLED, "stopped on request; the runtime did not confirm in time"),
                        ctx.limits.cancelGracePeriod().toMillis(), TimeUnit.MILLISECONDS);
            }
        }
    }

    /**
     * Stops following the runtime's stream without ending the run: the stream is closed (which does not stop
     * the run in the runtime) and nothing it still signals is logged. When the engine closes, for a run a
     * future engine follows again after re-attaching, and before a run that cannot be followed is stopped in
     * the runtime (whose report of the stop is then not logged: the engine ends the run INTERRUPTED).
     */
    void detach() {
        detached = true;
        cancelUpstream();
    }

    /**
     * The closing engine leaves the run to the next one if that one can follow it from what is stored: it
     * waits for an answer, or it streams with a resume point stored and no tool call open, and no tool the
     * person's browser runs is offered. Decided and detached under the run's order lock, so no answer is
     * delivered in between ({@link #deliverAnswer} refuses once the run is detached): an answer that the
     * next engine would not know reached the runtime would leave the run waiting for good.
     *
     * @return true if the run is detached and left; false if it must be stopped here
     */
    boolean leaveForNextEngine() {
        order.lock();
        try {
            RunStatus status = snapshot().status();
            boolean followable = !offersClientTools() && (ctx.can(Capability.REATTACH)
                    && (status == RunStatus.WAITING_FOR_INPUT
                            || status == RunStatus.RUNNING && followableElsewhere() && !runsHostTool())
                    || ctx.can(Capability.RESUME) && status == RunStatus.WAITING_FOR_INPUT
                            && waitsOnlyForEngineApprovals());
            if (!followable) {
                return false;
            }
            detached = true;
        } finally {
            order.unlock();
        }
        cancelUpstream();
        return true;
    }

    private boolean waitsOnlyForEngineApprovals() {
        List<Message> messages;
        List<PendingInput> pending;
        synchronized (this) {
            messages = reducer.messages();
            pending = reducer.pendingInputs();
        }
        return RunResumption.waitsOnlyForEngineApprovals(messages, pending, tools.hostActions());
    }

    private void cancelUpstream() {
        Flow.Subscription stream = upstream;
        if (stream != null) {
            cancelQuietly(stream);
        }
    }

    /**
     * Drops the run without storing anything more: another instance took it over (this instance's lease
     * lapsed), so whatever this one still has would contradict what the new holder writes. Its pending
     * events stop counting against the writer's back-pressure.
     */
    void abandon() {
        abandoned = true;
        runLog.abandon();
        detach();
        int dropped;
        synchronized (this) {
            dropped = writes.dropAll();
        }
        ctx.writer.dropped(dropped);
    }

    /**
     * The store says the run's thread was deleted (called by the batch writer, which dropped the run's
     * unstored work): nothing more of the run is stored; it ends here for its live subscribers (on a worker
     * thread: the writer must not wait for the run's end) and leaves memory.
     */
    void threadGone() {
        threadDeleted = true;
        abandon();
        Runnable ending = () -> withMdc(() -> {
            end(new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "the thread was deleted"));
            ctx.activeRuns.remove(runId, this);
        });
        try {
            ctx.work.execute(ending);
        } catch (RuntimeException e) {
            ctx.timers.execute(ending);
        }
    }

    /** The store says another instance holds this run now (called by the batch writer). */
    void leaseLost() {
        host.leaseLost(this);
    }

    /**
     * The store refused rows of this run (the batch writer left them out): a run still going fails with
     * STORE_FAILURE, on a worker thread (the writer must not wait for the run's end).
     */
    void storeRefused(String what) {
        if (hasEnded()) {
            return;
        }
        Runnable failure = () -> withMdc(() -> forceEnd(new AgentStreamEvent.RunFailed("STORE_FAILURE",
                "the store refused part of this run (" + what + ")")));
        try {
            ctx.work.execute(failure);
        } catch (RuntimeException e) {
            ctx.timers.execute(failure);
        }
    }

    /** Ends the run from this side: closes the runtime stream and logs the terminal event. */
    void forceEnd(RunStatus status, String reason) {
        forceEnd(new AgentStreamEvent.RunFinished(status, reason));
    }

    private void forceEnd(AgentStreamEvent terminal) {
        cancelRequested = true;
        Flow.Subscription stream = upstream;
        if (stream != null) {
            cancelQuietly(stream);
        }
        end(terminal);
    }

    // ------------------------------------------------------------------ tools the host side answers

    /** The agent finished a tool call: the host side answers host actions and client tools. */
    private void toolCallEnded(String executionId) {
        if (!ctx.can(Capability.HOST_TOOLS)) {
            return;
        }
        ActionExecutionMessage call;
        synchronized (this) {
            call = reducer.action(executionId);
        }
        if (call != null) {
            tools.called(call);
        }
    }

    // ------------------------------------------------------------------ the batch writer's side

    /** Moves this run's oldest pending work, within the caps, into a batch (called by the batch writer). */
    synchronized RunWrites.Drained drainForFlush(StoreBatch.Builder batch, long nowMillis, int maxEvents,
            long maxBytes) {
        if (abandoned) {
            return new RunWrites.Drained(0, 0, false, 0);
        }
        RunWrites.Drained drained = writes.drainInto(batch, nowMillis, reducer, this::currentRecord, maxEvents, maxBytes);
        resume.handOver(batch, drained.lastSeq());
        return drained;
    }

    /** True while logged events wait to be handed to the batch writer. */
    synchronized boolean hasEventsToStore() {
        return writes.hasEvents();
    }

    /**
     * The store settled what this run gave to batches up to {@code drained} (stored it, or left out rows
     * it refused). Once that includes the terminal event the run leaves memory: its end is durable.
     */
    void stored(RunWrites.Drained drained) {
        boolean endStored;
        synchronized (this) {
            if (drained.reservedUpTo() > 0) {
                writes.reserved(drained.reservedUpTo());
            }
            endStored = terminalSeq > 0 && drained.lastSeq() >= terminalSeq;
        }
        if (drained.lastSeq() > 0) {
            runLog.flushed(drained.lastSeq());
        }
        if (endStored) {
            leaveMemoryOnceEndedAndStored(true, false);
            showEndOnceStored();
            closeInputsOnceEndStored();
        }
    }

    /**
     * Once the end is stored, the inputs still pending are closed (CANCELLED): not before, so that an answer
     * taken back (reopened) by another instance that saw the run still going cannot stay pending on the ended
     * run — from now on that instance sees the run ended, and closes what it takes back itself.
     */
    private void closeInputsOnceEndStored() {
        synchronized (this) {
            if (inputsClosedAfterEnd || flushingEnd) {
                return;
            }
            inputsClosedAfterEnd = true;
        }
        Runnable close = () -> closePendingInputs(0);
        try {
            ctx.work.execute(close);
        } catch (RuntimeException closing) {
            close.run();
        }
    }

    /**
     * Shows the run's end — to subscribers, and in the record callers read — once it is stored (at once for
     * a run nothing is stored for any more: its thread was deleted). An end the store has not taken is never
     * shown: another instance may take the run over and store another one, and a subscriber that saw an end
     * would not look again.
     *
     * @return true if the end is shown
     */
    private boolean showEndOnceStored() {
        Run done;
        long last;
        synchronized (this) {
            if (endVisible) {
                return true;
            }
            if (ending == null || !(endStored || threadDeleted)) {
                return false;
            }
            endVisible = true;
            done = ending;
            last = endingSeq;
        }
        published = done;
        publishedInputs = List.of();
        runLog.publish(last);
        leaveMemoryOnceEndedAndStored(false, true);
        return true;
    }

    /**
     * The run leaves memory once its end is both stored and shown (its thread freed first), whichever comes
     * second: until then callers read it from memory, so nobody sees it ended while its thread is busy.
     */
    private void leaveMemoryOnceEndedAndStored(boolean stored, boolean shown) {
        boolean leave;
        synchronized (this) {
            endStored |= stored;
            endShown |= shown;
            leave = endStored && endShown;
        }
        if (leave) {
            ctx.activeRuns.remove(runId, this);
        }
    }

    private Run currentRecord() {
        RunStatus status = reducer.status() == RunStatus.QUEUED ? run.status() : reducer.status();
        if (status.isTerminal()) {
            if (!run.status().isTerminal()) {
                run = endedRecord(run, reducer, ctx.now());
            }
            return run;
        }
        return new Run(run.id(), run.threadId(), run.ownerId(), status, run.userMessageId(), run.assistantMessageId(),
                run.input(), run.modelId(), run.skill(), run.maxIterations(), run.context(), run.createdAt(),
                run.startedAt(), null, null, reducer.usage(), reducer.guardrailsFailureReason());
    }

    /** The record of {@code run} ended as {@code reducer} (which has applied its terminal event) says, at {@code at}. */
    static Run endedRecord(Run run, RunReducer reducer, java.time.Instant at) {
        ErrorInfo error = reducer.error();
        if (error == null && reducer.status() == RunStatus.INTERRUPTED && reducer.finishReason() != null) {
            error = new ErrorInfo("INTERRUPTED", reducer.finishReason());
        }
        return run.finished(reducer.status(), at, error, reducer.usage(), reducer.guardrailsFailureReason());
    }

    private void withMdc(Runnable work) {
        RunMdc.run(threadId, runId, work);
    }
}
