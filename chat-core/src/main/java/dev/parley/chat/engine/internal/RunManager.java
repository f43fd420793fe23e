package dev.parley.chat.engine.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.cluster.ControlMessage;
import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.engine.AnswerResult;
import dev.parley.chat.engine.DoubleTexting;
import dev.parley.chat.engine.RunState;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.ClarifyMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.store.AnswerOutcome;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadTouch;
import java.util.ArrayList;
import java.util.Set;
import java.util.UUID;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Flow;
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

    private final EngineContext ctx;
    private final RunRecovery recovery;
    /** Set when the engine closes: no run starts any more, queued runs stay queued. Guarded by ctx.lanes. */
    private boolean closing;
    private final ClusterDuties cluster;

    public RunManager(EngineContext ctx) {
        this.ctx = ctx;
        this.recovery = new RunRecovery(ctx, this);
        this.cluster = new ClusterDuties(ctx, recovery, this::releaseLane);
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
     * another) and waits up to {@code patience} for them to end, e.g. before the thread is erased.
     */
    public void stopThread(String threadId, java.time.Duration patience) {
        for (Run run : ctx.store.findThreadRuns(threadId, ACTIVE)) {
            cancel(run);
        }
        long deadline = System.nanoTime() + patience.toNanos();
        while (System.nanoTime() < deadline && (isThreadBusy(threadId)
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
     * strategy says. Returns at once; the work goes on in the background.
     */
    public RunTicket start(Run run, List<Message> initialMessages, ThreadTouch touch, DoubleTexting strategy,
            List<HostToolSpec> clientTools) {
        String threadId = run.threadId();
        awaitEndingRun(threadId);
        ActiveRun interrupted = null;
        ActiveRun created;
        boolean busy;
        synchronized (ctx.lanes) {
            if (closing) {
                throw new ChatException(ErrorCode.RUNTIME_UNAVAILABLE, "the engine is shutting down");
            }
            ActiveRun current = ctx.lanes.current(threadId);
            List<Run> storedActive = current != null ? List.of() : ctx.store.findThreadRuns(threadId, ACTIVE);
            busy = current != null || !storedActive.isEmpty();
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
            Run toStore = busy ? run.withStatus(RunStatus.QUEUED) : run;
            created = new ActiveRun(ctx, toStore, initialMessages, 0, EngineContext.SEQ_RESERVATION_BLOCK, this,
                    clientTools);
            StoreBatch.Builder batch = StoreBatch.builder().run(toStore).messages(initialMessages).touch(touch)
                    .reserveSeq(toStore.id(), EngineContext.SEQ_RESERVATION_BLOCK);
            if (ctx.clustered()) {
                batch.lease(new RunLease(toStore.id(), ctx.coordinator.instanceId(), ctx.leaseEnd()));
            }
            try {
                ctx.store.write(batch.build());
            } catch (ChatException e) {
                if (e.code() == ErrorCode.CONFLICT) {
                    throw busyThread(strategy);
                }
                throw e;
            }
            ctx.activeRuns.put(run.id(), created);
            if (!busy) {
                ctx.lanes.occupy(threadId, created);
            } else {
                ctx.lanes.enqueue(threadId, created);
                if (strategy == DoubleTexting.INTERRUPT) {
                    interrupted = current;
                }
            }
        }
        if (interrupted != null) {
            interrupted.cancel();
        }
        if (!busy) {
            launch(created);
        }
        return new RunTicket(run.id(), threadId, run.userMessageId(), run.assistantMessageId(),
                busy ? RunStatus.QUEUED : RunStatus.RUNNING);
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

    /** Hands a run's launch to a worker; a refused hand-off ends the run. */
    void launch(ActiveRun run) {
        try {
            ctx.work.execute(run::launch);
        } catch (RuntimeException e) {
            run.launchRefused(e);
        }
    }

    @Override
    public void runEnded(ActiveRun run) {
        releaseLane(run);
    }

    @Override
    public void leaseLost(ActiveRun run) {
        cluster.letGo(run.runId(), "another instance holds its lease");
    }

    boolean isClosing() {
        synchronized (ctx.lanes) {
            return closing;
        }
    }

    /** Frees the run's thread: the next queued run starts, unless the engine is closing (it stays queued). */
    private void releaseLane(ActiveRun run) {
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

    /** Stops a run. A queued run ends CANCELLED at once; an active one as soon as the runtime stops. */
    public Run cancel(Run run) {
        ActiveRun active = ctx.activeRuns.get(run.id());
        if (active == null) {
            if (ctx.clustered() && !run.status().isTerminal()) {
                ctx.coordinator.send(new ControlMessage(ControlMessage.Kind.CANCEL, run.id(),
                        UUID.randomUUID().toString(), ctx.coordinator.instanceId(), null, null));
            }
            return run;
        }
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
        return active.published();
    }

    /**
     * Delivers an answer to a pending input once; see {@link dev.parley.chat.engine.ChatEngine#answer}. The
     * answer's shape was checked against the input by the caller.
     */
    public AnswerResult answer(Run run, PendingInput input, InputAnswer answer) {
        String inputId = input.inputId();
        ActiveRun active = ctx.activeRuns.get(run.id());
        AnswerOutcome outcome = ctx.store.answerInput(run.id(), inputId, answer, ctx.now());
        switch (outcome) {
            case NOT_FOUND:
                throw ChatException.notFound("input", inputId);
            case REPLAYED:
                return AnswerResult.REPLAYED;
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
        if (active == null && ctx.clustered() && !run.status().isTerminal()) {
            return cluster.answerElsewhere(run, inputId);
        }
        if (active == null || active.isFinished()) {
            ctx.store.reopenInput(run.id(), inputId);
            throw ChatException.conflict("the run no longer waits for this answer");
        }
        try {
            active.deliverAnswer(input, answer);
        } catch (RuntimeException e) {
            ctx.store.reopenInput(run.id(), inputId);
            throw e instanceof ChatException ? (ChatException) e
                    : new ChatException(ErrorCode.RUNTIME_UNAVAILABLE, "the answer could not reach the runtime", e);
        }
        return AnswerResult.ACCEPTED;
    }

    /** The run's status, newest seq and pending inputs. */
    public RunState state(Run run) {
        ActiveRun active = ctx.activeRuns.get(run.id());
        if (active != null) {
            return active.state();
        }
        List<PendingInput> pending = ctx.store.listPendingInputs(run.id());
        List<ClarifyMessage> clarifies = new ArrayList<>();
        for (PendingInput input : pending) {
            if (input.request() instanceof ClarifyRequest ask) {
                ctx.store.findMessage(input.messageId())
                        .filter(ClarifyMessage.class::isInstance)
                        .map(ClarifyMessage.class::cast)
                        .ifPresentOrElse(clarifies::add, () -> clarifies.add(new ClarifyMessage(input.messageId(),
                                run.threadId(), run.id(), run.assistantMessageId(), MessageStatus.IN_PROGRESS,
                                input.createdAt(), input.inputId(), ask.question(), ask.choices(), ask.multiSelect(),
                                List.of())));
            }
        }
        return new RunState(run, ctx.store.lastSeq(run.id()), clarifies, pending);
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
     * Brings the store in line after a restart: a run that was RUNNING becomes INTERRUPTED; a run waiting
     * for a clarify answer is re-attached when the runtime can, else INTERRUPTED; QUEUED runs start in
     * order. With other instances, only runs whose lease expired are taken over.
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
     * Ends this process's part: running runs are INTERRUPTED; runs waiting on a re-attachable input and
     * queued runs stay for the next engine (with other instances, their leases are released so that one of
     * them takes the runs over at once).
     */
    public void close() {
        synchronized (ctx.lanes) {
            closing = true;
        }
        List<String> leftBehind = new ArrayList<>();
        for (ActiveRun run : new ArrayList<>(ctx.activeRuns.values())) {
            if (run.isFinished()) {
                continue;
            }
            Run now = run.snapshot();
            if (now.status() == RunStatus.WAITING_FOR_INPUT && ctx.can(Capability.REATTACH)) {
                run.detach();
                leftBehind.add(run.runId());
                continue;
            }
            if (now.status() == RunStatus.QUEUED) {
                leftBehind.add(run.runId());
                continue;
            }
            run.forceEnd(RunStatus.INTERRUPTED, "the host shut down while the run was active");
        }
        ctx.writer.close();
        if (ctx.clustered() && !leftBehind.isEmpty()) {
            try {
                ctx.store.leaseRuns(ctx.coordinator.instanceId(), leftBehind, ctx.now().minusMillis(1));
            } catch (RuntimeException e) {
                log.warn("Releasing the leases of runs left for other instances failed; they expire anyway", e);
            }
        }
    }
}
