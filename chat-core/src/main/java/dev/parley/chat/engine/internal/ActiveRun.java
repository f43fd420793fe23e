package dev.parley.chat.engine.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionCall;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.ErrorInfo;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.reduce.RunReducer;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.ToolResult;
import dev.parley.chat.store.HostActionRecord;
import dev.parley.chat.store.PendingClarify;
import dev.parley.chat.store.ClarifyState;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadTouch;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Flow;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * One run while it lives in this process: its log, its reducer, its connection to the runtime and the
 * work waiting for the batch writer.
 *
 * <p>Everything that changes the run goes through {@link #ingest}: it numbers the event, folds it into
 * the reducer, adds it to the log and queues it for the store under the run's lock, then makes it
 * visible to subscribers. Clarify requests and terminal events are stored before they become visible.
 * Events may come from the runtime's stream thread, from host-action workers and from API callers
 * (cancel, clarify answers); the lock keeps one order.
 */
public final class ActiveRun {
    private static final Logger log = LoggerFactory.getLogger(ActiveRun.class);

    private final EngineContext ctx;
    private final String runId;
    private final String threadId;
    private final List<Message> initialMessages;
    private final RunReducer reducer = new RunReducer();
    private final RunLog runLog;
    private final Consumer<ActiveRun> onFinished;
    /** Keeps one order between the runtime's stream and the engine's own events (answers). */
    private final ReentrantLock order = new ReentrantLock();

    // guarded by this
    private Run run;
    private long lastSeq;
    /** The store's reservation mark as known stored: no event above it may be published. */
    private long reservedSeq;
    /** The mark asked of the batch writer and not yet stored (0: none asked). */
    private long requestedReservation;
    /** The mark to put into the next batch (0: none). */
    private long pendingReservation;
    private int synchronousReservations;
    private boolean terminalAppended;
    private long syncSeq;
    private List<RunEvent> pendingEvents = new ArrayList<>();
    private final List<PendingClarify> pendingClarifies = new ArrayList<>();
    private final List<ThreadTouch> pendingTouches = new ArrayList<>();
    private boolean runDirty;
    private boolean forceMessages;
    private long lastMessageFlush;
    private @Nullable ScheduledFuture<?> cancelTimer;

    /** The record callers see: it changes only once what it shows is stored and visible. */
    private volatile Run published;
    private volatile Flow.@Nullable Subscription upstream;
    private volatile boolean cancelRequested;
    private volatile boolean finished;
    private volatile boolean detached;
    private volatile boolean abandoned;

    /**
     * @param baseSeq the seq after which this process numbers events (0 for a new run; after a restart,
     *     above every seq a client may hold)
     * @param initialMessages the user message (if any) and the assistant placeholder, announced first
     */
    ActiveRun(EngineContext ctx, Run run, List<Message> initialMessages, long baseSeq, long reservedSeq,
            Consumer<ActiveRun> onFinished) {
        this.ctx = ctx;
        this.run = run;
        this.published = run;
        this.runId = run.id();
        this.threadId = run.threadId();
        this.initialMessages = List.copyOf(initialMessages);
        this.lastSeq = baseSeq;
        this.reservedSeq = reservedSeq;
        this.runLog = new RunLog(runId, EngineContext.RING_CAPACITY, baseSeq);
        this.onFinished = onFinished;
        this.lastMessageFlush = ctx.clock.millis();
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

    boolean isFinished() {
        return finished;
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

    /** The run's messages as the reducer holds them now, in order of first appearance. */
    synchronized List<Message> messages() {
        return reducer.messages();
    }

    synchronized List<dev.parley.chat.model.ClarifyMessage> pendingClarifyMessages() {
        return reducer.pendingClarifies();
    }

    /** Feeds stored events into the reducer (after a restart) without logging them again. */
    synchronized void replayStored(List<RunEvent> events) {
        for (RunEvent event : events) {
            reducer.apply(event);
        }
        reducer.takeChanged();
    }

    synchronized RunStatus reducedStatus() {
        return reducer.status();
    }

    // ------------------------------------------------------------------ starting

    /** Starts the run: announces it, then subscribes to the runtime. Runs on a worker thread. */
    void launch() {
        withMdc(() -> {
            synchronized (this) {
                run = run.started(ctx.now());
                runDirty = true;
                published = run;
            }
            announce();
            ctx.listener.runStarted(snapshot());
            if (cancelRequested) {
                ingest(new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "stopped before it started"));
                return;
            }
            RunRequest request = request();
            try {
                Flow.Publisher<AgentStreamEvent> stream = run.isRegeneration()
                        ? ctx.runtime.retry(request)
                        : ctx.runtime.generateResponse(request);
                stream.subscribe(new Pump());
            } catch (RuntimeException e) {
                fail(e);
            }
        });
    }

    /** Re-attaches to a run still waiting in the runtime after this host restarted. */
    void reattach(String resumeToken) {
        withMdc(() -> {
            try {
                ctx.runtime.reattach(request(), resumeToken).subscribe(new Pump());
            } catch (RuntimeException e) {
                fail(e);
            }
        });
    }

    /** Logs the run's start (once): run_started and its first messages. */
    void announce() {
        if (reducedStatus() != RunStatus.QUEUED) {
            return;
        }
        ingest(new AgentStreamEvent.RunStarted(threadId, runId, run.assistantMessageId()));
        ingest(new AgentStreamEvent.MessagesSnapshot(threadId, runId, initialMessages, null));
    }

    private RunRequest request() {
        Run r = snapshot();
        String session = ctx.store.findThread(threadId).map(t -> t.runtimeSessionId()).orElse(null);
        List<HostToolSpec> tools = new ArrayList<>();
        if (ctx.can(Capability.HOST_TOOLS)) {
            for (HostAction action : ctx.hostActions.values()) {
                tools.add(action.spec());
            }
        }
        return new RunRequest(threadId, runId, r.ownerId(), r.assistantMessageId(), r.input(), session, r.modelId(),
                r.skill(), r.maxIterations(), tools, r.context());
    }

    // ------------------------------------------------------------------ the event path

    /**
     * Logs one event and applies its effects. Ignored after the terminal event.
     *
     * @return the logged event, or null if it was ignored
     */
    @Nullable RunEvent ingest(AgentStreamEvent event) {
        order.lock();
        try {
            return ingestInOrder(event);
        } finally {
            order.unlock();
        }
    }

    /**
     * Hands a clarify answer to the runtime and logs it, with nothing from the runtime's stream in
     * between: what the runtime does after the answer is logged after the answer.
     *
     * @throws ChatException CONFLICT if the run already ended; whatever the runtime throws
     */
    void deliverAnswer(ClarifyReply reply) {
        order.lock();
        try {
            synchronized (this) {
                if (terminalAppended) {
                    throw ChatException.conflict("the run no longer waits for this answer");
                }
            }
            ctx.runtime.answerClarify(reply);
            ingestInOrder(new AgentStreamEvent.ClarifyResolved(reply.clarifyId(),
                    AgentStreamEvent.ClarifyOutcome.ANSWERED, reply.answer()));
        } finally {
            order.unlock();
        }
    }

    private @Nullable RunEvent ingestInOrder(AgentStreamEvent event) {
        RunEvent logged;
        boolean durableFirst = event instanceof AgentStreamEvent.ClarifyRequested || event.isTerminal();
        boolean statusChanged;
        synchronized (this) {
            if (terminalAppended) {
                return null;
            }
            long seq = lastSeq + 1;
            reserveAhead(seq);
            lastSeq = seq;
            RunStatus before = reducer.status();
            logged = new RunEvent(runId, seq, ctx.clock.millis(), event);
            reducer.apply(logged);
            runLog.add(logged);
            pendingEvents.add(logged);
            statusChanged = reducer.status() != before;
            if (statusChanged) {
                runDirty = true;
            }
            if (durableFirst && syncSeq == 0) {
                syncSeq = seq;
            }
            if (event instanceof AgentStreamEvent.ClarifyRequested) {
                AgentStreamEvent.ClarifyRequested ask = (AgentStreamEvent.ClarifyRequested) event;
                pendingClarifies.add(new PendingClarify(runId, ask.clarifyId(), ask.messageId(), ask.question(),
                        ask.choices(), ask.multiSelect(), ask.resumeToken(), ClarifyState.PENDING, List.of(),
                        ctx.now(), null));
                forceMessages = true;
            } else if (event instanceof AgentStreamEvent.RuntimeSession) {
                pendingTouches.add(new ThreadTouch(threadId, ((AgentStreamEvent.RuntimeSession) event).sessionId(),
                        null, null));
            } else if (event.isTerminal()) {
                terminalAppended = true;
                forceMessages = true;
                runDirty = true;
                pendingTouches.add(new ThreadTouch(threadId, null, ctx.now(), null));
            }
        }
        ctx.writer.markDirty(this, 1);
        ctx.listener.eventAppended(logged);

        if (event.isTerminal()) {
            finish();
        } else if (durableFirst) {
            if (!ctx.writer.flushNow()) {
                log.error("Run {}: the clarify request could not be stored; showing it anyway", runId);
            }
            synchronized (this) {
                syncSeq = 0;
            }
            publish(statusChanged);
        } else {
            publish(statusChanged);
            if (event instanceof AgentStreamEvent.ToolCallEnd) {
                maybeRunHostAction(((AgentStreamEvent.ToolCallEnd) event).executionId());
            }
        }
        return logged;
    }

    /**
     * Makes sure the store's reservation mark covers {@code seq} before the event can be seen, so that
     * after a crash new events are numbered above anything a client holds. The next block is asked of
     * the batch writer as soon as less than a block is left; only a writer a whole block behind (or a
     * run taken over from another instance) makes the event path wait for the store here. Called
     * holding this run's monitor.
     */
    private void reserveAhead(long seq) {
        if (seq > reservedSeq) {
            long upTo = seq + EngineContext.SEQ_RESERVATION_BLOCK;
            ctx.store.reserveSeq(runId, upTo);
            reservedSeq = upTo;
            synchronousReservations++;
        } else if (reservedSeq - seq < EngineContext.SEQ_RESERVATION_BLOCK && requestedReservation <= reservedSeq) {
            requestedReservation = reservedSeq + EngineContext.SEQ_RESERVATION_BLOCK;
            pendingReservation = requestedReservation;
        }
    }

    /** How often this run's event path waited for a seq reservation. */
    synchronized int synchronousReservations() {
        return synchronousReservations;
    }

    private void publish(boolean statusChanged) {
        long visible;
        synchronized (this) {
            visible = syncSeq > 0 ? Math.min(lastSeq, syncSeq - 1) : lastSeq;
            if (statusChanged && syncSeq == 0) {
                published = currentRecord();
            }
        }
        runLog.publish(visible);
    }

    private void finish() {
        synchronized (this) {
            if (cancelTimer != null) {
                cancelTimer.cancel(false);
            }
        }
        if (!ctx.writer.flushNow()) {
            log.error("Run {}: its end could not be stored; the store will be retried", runId);
        }
        try {
            ctx.store.cancelPendingClarifies(runId);
        } catch (RuntimeException e) {
            log.warn("Run {}: closing its pending clarifies failed", runId, e);
        }
        long last;
        Run done;
        synchronized (this) {
            syncSeq = 0;
            last = lastSeq;
            done = currentRecord();
        }
        finished = true;
        onFinished.accept(this);
        published = done;
        runLog.publish(last);
        Flow.Subscription stream = upstream;
        if (stream != null && cancelRequested) {
            stream.cancel();
        }
        ctx.listener.runFinished(done);
    }

    /** Fails the run because its stream or the runtime call failed. */
    void fail(Throwable error) {
        String code = error instanceof ChatException ? ((ChatException) error).code().name() : "RUNTIME_FAILED";
        String message = error.getMessage() != null ? error.getMessage() : error.getClass().getSimpleName();
        if (!(error instanceof ChatException)) {
            log.warn("Run {} failed", runId, error);
        }
        ingest(new AgentStreamEvent.RunFailed(code, message));
    }

    // ------------------------------------------------------------------ stopping

    /**
     * Stops the run: through the runtime when it can cancel (its stream then ends CANCELLED; if it does
     * not confirm within the grace period the engine ends the run itself), else by closing the stream.
     */
    void cancel() {
        cancelRequested = true;
        synchronized (this) {
            if (terminalAppended) {
                return;
            }
        }
        if (upstream == null) {
            return;
        }
        if (!ctx.can(Capability.CANCEL)) {
            forceEnd(RunStatus.CANCELLED, "stopped on request");
            return;
        }
        try {
            ctx.runtime.cancel(runId);
        } catch (RuntimeException e) {
            log.warn("Run {}: the runtime refused the cancel ({}); closing the stream", runId, e.getMessage());
            forceEnd(RunStatus.CANCELLED, "stopped on request");
            return;
        }
        synchronized (this) {
            if (!terminalAppended) {
                cancelTimer = ctx.timers.schedule(
                        () -> forceEnd(RunStatus.CANCELLED, "stopped on request; the runtime did not confirm in time"),
                        ctx.limits.cancelGracePeriod().toMillis(), TimeUnit.MILLISECONDS);
            }
        }
    }

    /**
     * Lets go of the run without ending it, when the engine closes while the run waits for an answer a
     * future engine can deliver after re-attaching: the runtime stream is closed (which does not stop the
     * run in the runtime) and nothing it still signals is logged.
     */
    void detach() {
        detached = true;
        Flow.Subscription stream = upstream;
        if (stream != null) {
            stream.cancel();
        }
    }

    /**
     * Drops the run without storing anything more: another instance took it over (this instance's lease
     * lapsed), so whatever this one still has would contradict what the new holder writes.
     */
    void abandon() {
        abandoned = true;
        detach();
        synchronized (this) {
            pendingEvents = new ArrayList<>();
            pendingClarifies.clear();
            pendingTouches.clear();
            runDirty = false;
        }
    }

    /** Ends the run from this side: closes the runtime stream and logs the terminal event. */
    void forceEnd(RunStatus status, String reason) {
        cancelRequested = true;
        Flow.Subscription stream = upstream;
        if (stream != null) {
            stream.cancel();
        }
        ingest(new AgentStreamEvent.RunFinished(status, reason));
    }

    // ------------------------------------------------------------------ host actions

    private void maybeRunHostAction(String executionId) {
        if (!ctx.can(Capability.HOST_TOOLS)) {
            return;
        }
        ActionExecutionMessage call;
        synchronized (this) {
            call = reducer.action(executionId);
        }
        if (call == null) {
            return;
        }
        HostAction action = ctx.hostActions.get(call.name());
        if (action != null) {
            ctx.work.execute(() -> withMdc(() -> runHostAction(call, action)));
        }
    }

    private void runHostAction(ActionExecutionMessage call, HostAction action) {
        String result;
        boolean error;
        HostActionRecord record = ctx.store.claimHostAction(runId, call.executionId(), call.name(), call.arguments(),
                ctx.now());
        if (record.claimedNow()) {
            try {
                String value = action.handler().handle(new HostActionCall(threadId, runId, snapshot().ownerId(),
                        call.executionId(), call.name(), call.arguments()));
                result = value == null ? "" : value;
                error = false;
            } catch (Exception | LinkageError e) {
                log.warn("Run {}: host action {} failed", runId, call.name(), e);
                result = "host action " + call.name() + " failed: "
                        + (e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName());
                error = true;
            }
            ctx.store.completeHostAction(runId, call.executionId(), result, error, ctx.now());
        } else if (record.isCompleted()) {
            result = record.result();
            error = record.error();
        } else {
            return;
        }
        ingest(new AgentStreamEvent.ToolCallResult(runId + ":result:" + call.executionId(), call.executionId(),
                result, error));
        try {
            ctx.runtime.submitToolResult(new ToolResult(runId, call.executionId(), result, error));
        } catch (RuntimeException e) {
            log.warn("Run {}: handing the result of {} back to the runtime failed", runId, call.name(), e);
            fail(e);
        }
    }

    // ------------------------------------------------------------------ the batch writer's side

    /**
     * What one run gave to a batch.
     *
     * @param lastSeq the newest event in the batch, 0 if none
     * @param reservedUpTo the seq reservation mark in the batch, 0 if none
     */
    record Drained(long lastSeq, long reservedUpTo, boolean stillDirty) {
        boolean storesProgress() {
            return lastSeq > 0 || reservedUpTo > 0;
        }
    }

    /** Moves this run's pending work into a batch (called by the batch writer). */
    synchronized Drained drainForFlush(StoreBatch.Builder batch, long nowMillis) {
        if (abandoned) {
            return new Drained(0, 0, false);
        }
        long last = 0;
        if (!pendingEvents.isEmpty()) {
            batch.events(pendingEvents);
            last = pendingEvents.get(pendingEvents.size() - 1).seq();
            pendingEvents = new ArrayList<>();
        }
        if (runDirty) {
            batch.run(currentRecord());
            runDirty = false;
        }
        boolean messagesDue = forceMessages
                || nowMillis - lastMessageFlush >= ctx.limits.messageFlushInterval().toMillis();
        if (messagesDue && reducer.hasChanges()) {
            batch.messages(reducer.takeChanged());
            lastMessageFlush = nowMillis;
        }
        forceMessages = false;
        for (PendingClarify clarify : pendingClarifies) {
            batch.clarify(clarify);
        }
        pendingClarifies.clear();
        for (ThreadTouch touch : pendingTouches) {
            batch.touch(touch);
        }
        pendingTouches.clear();
        long reservation = pendingReservation;
        if (reservation > 0) {
            batch.reserveSeq(runId, reservation);
            pendingReservation = 0;
        }
        return new Drained(last, reservation, reducer.hasChanges());
    }

    /** The store committed what this run gave to a batch. */
    void stored(Drained drained) {
        if (drained.reservedUpTo() > 0) {
            synchronized (this) {
                reservedSeq = Math.max(reservedSeq, drained.reservedUpTo());
            }
        }
        if (drained.lastSeq() > 0) {
            runLog.flushed(drained.lastSeq());
        }
    }

    private Run currentRecord() {
        RunStatus status = reducer.status() == RunStatus.QUEUED ? run.status() : reducer.status();
        if (status.isTerminal()) {
            ErrorInfo error = reducer.error();
            if (error == null && status == RunStatus.INTERRUPTED && reducer.finishReason() != null) {
                error = new ErrorInfo("INTERRUPTED", reducer.finishReason());
            }
            if (!run.status().isTerminal()) {
                run = run.finished(status, ctx.now(), error, reducer.usage(), reducer.guardrailsFailureReason());
            }
            return run;
        }
        return new Run(run.id(), run.threadId(), run.ownerId(), status, run.userMessageId(), run.assistantMessageId(),
                run.input(), run.modelId(), run.skill(), run.maxIterations(), run.context(), run.createdAt(),
                run.startedAt(), null, null, reducer.usage(), reducer.guardrailsFailureReason());
    }

    private void withMdc(Runnable work) {
        MDC.put("parley.threadId", threadId);
        MDC.put("parley.runId", runId);
        try {
            work.run();
        } finally {
            MDC.remove("parley.threadId");
            MDC.remove("parley.runId");
        }
    }

    /** Feeds the runtime's stream into the run. */
    private final class Pump implements Flow.Subscriber<AgentStreamEvent> {
        @Override
        public void onSubscribe(Flow.Subscription subscription) {
            upstream = subscription;
            boolean ended;
            synchronized (ActiveRun.this) {
                ended = terminalAppended;
            }
            if (ended || detached) {
                subscription.cancel();
                return;
            }
            subscription.request(Long.MAX_VALUE);
            if (cancelRequested) {
                cancel();
            }
        }

        @Override
        public void onNext(AgentStreamEvent event) {
            if (detached || event instanceof AgentStreamEvent.RunStarted || event instanceof AgentStreamEvent.Unknown) {
                return;
            }
            if (event instanceof AgentStreamEvent.ClarifyResolved
                    && ((AgentStreamEvent.ClarifyResolved) event).outcome() == AgentStreamEvent.ClarifyOutcome.ANSWERED) {
                return;
            }
            try {
                ingest(event);
            } catch (RuntimeException e) {
                log.error("Run {}: an event could not be logged; ending the run", runId, e);
                Flow.Subscription stream = upstream;
                if (stream != null) {
                    stream.cancel();
                }
                try {
                    ingest(new AgentStreamEvent.RunFailed("INTERNAL", "the engine could not log an event"));
                } catch (RuntimeException again) {
                    log.error("Run {}: the failure could not be logged either", runId, again);
                }
                return;
            }
            ctx.writer.awaitCapacity();
        }

        @Override
        public void onError(Throwable error) {
            if (!detached) {
                fail(error);
            }
        }

        @Override
        public void onComplete() {
            if (detached) {
                return;
            }
            ingest(new AgentStreamEvent.RunFailed("RUNTIME_FAILED", "the runtime's stream ended without a final event"));
        }
    }
}
