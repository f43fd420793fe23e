package dev.parley.chat.engine.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.engine.AnswerResult;
import dev.parley.chat.engine.DoubleTexting;
import dev.parley.chat.engine.RunState;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.ClarifyMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.store.AnswerOutcome;
import dev.parley.chat.store.PendingClarify;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadTouch;
import java.util.ArrayList;
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
public final class RunManager {
    private static final Logger log = LoggerFactory.getLogger(RunManager.class);

    private final EngineContext ctx;

    public RunManager(EngineContext ctx) {
        this.ctx = ctx;
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

    /** The live messages of a run active here (fresher than the stored ones), or null. */
    public @Nullable List<Message> liveMessages(String runId) {
        ActiveRun active = ctx.activeRuns.get(runId);
        return active == null ? null : active.messages();
    }

    /**
     * Stores a new run with its first messages and starts it, or queues it, as the double-texting
     * strategy says. Returns at once; the work goes on in the background.
     */
    public RunTicket start(Run run, List<Message> initialMessages, ThreadTouch touch, DoubleTexting strategy) {
        String threadId = run.threadId();
        ActiveRun interrupted = null;
        ActiveRun created;
        boolean busy;
        synchronized (ctx.lanes) {
            ActiveRun current = ctx.lanes.current(threadId);
            busy = current != null || !ctx.store.findThreadRuns(threadId, ACTIVE).isEmpty();
            if (busy && strategy == DoubleTexting.REJECT) {
                throw ChatException.conflict("the thread already has an active run; wait for it, or cancel it");
            }
            if (busy && current == null) {
                throw ChatException.conflict("the thread's active run is held by another host instance");
            }
            Run toStore = busy ? run.withStatus(RunStatus.QUEUED) : run;
            created = new ActiveRun(ctx, toStore, initialMessages, 0, 0, this::onFinished);
            ctx.store.write(StoreBatch.builder().run(toStore).messages(initialMessages).touch(touch).build());
            ctx.activeRuns.put(run.id(), created);
            if (!busy) {
                ctx.lanes.occupy(threadId, created);
            } else {
                ctx.lanes.enqueue(threadId, created, strategy == DoubleTexting.INTERRUPT);
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

    private void launch(ActiveRun run) {
        try {
            ctx.work.execute(run::launch);
        } catch (RuntimeException e) {
            log.error("Run {} could not be started", run.runId(), e);
            run.fail(new ChatException(ErrorCode.INTERNAL, "the engine could not start the run", e));
        }
    }

    private void onFinished(ActiveRun run) {
        ctx.activeRuns.remove(run.runId());
        ActiveRun next;
        synchronized (ctx.lanes) {
            next = ctx.lanes.release(run.threadId(), run);
        }
        if (next != null) {
            launch(next);
        }
    }

    /** Stops a run. A queued run ends CANCELLED at once; an active one as soon as the runtime stops. */
    public Run cancel(Run run) {
        ActiveRun active = ctx.activeRuns.get(run.id());
        if (active == null) {
            return run;
        }
        boolean wasQueued;
        synchronized (ctx.lanes) {
            wasQueued = ctx.lanes.dequeue(active.threadId(), active);
        }
        if (wasQueued) {
            active.announce();
            active.forceEnd(RunStatus.CANCELLED, "cancelled before it started");
            ctx.activeRuns.remove(active.runId());
        } else {
            active.cancel();
        }
        return active.published();
    }

    /** Delivers a clarify answer once; see {@link dev.parley.chat.engine.ChatEngine#answer}. */
    public AnswerResult answer(Run run, String clarifyId, List<String> answer) {
        PendingClarify clarify = ctx.store.findClarify(run.id(), clarifyId)
                .orElseThrow(() -> ChatException.notFound("clarify", clarifyId));
        if (clarify.state() == dev.parley.chat.store.ClarifyState.PENDING && !clarify.multiSelect()
                && answer.size() > 1) {
            throw ChatException.invalidInput("this question takes one answer, got " + answer.size());
        }
        ActiveRun active = ctx.activeRuns.get(run.id());
        AnswerOutcome outcome = ctx.store.answerClarify(run.id(), clarifyId, answer, ctx.now());
        switch (outcome) {
            case NOT_FOUND:
                throw ChatException.notFound("clarify", clarifyId);
            case REPLAYED:
                return AnswerResult.REPLAYED;
            case CONFLICT:
                throw ChatException.conflict(clarify.state() == dev.parley.chat.store.ClarifyState.CANCELLED
                        ? "the question was withdrawn; the run no longer waits for it"
                        : "the question was already answered differently");
            default:
                break;
        }
        if (active == null || active.isFinished()) {
            ctx.store.reopenClarify(run.id(), clarifyId);
            throw ChatException.conflict("the run no longer waits for this answer");
        }
        if (!ctx.can(Capability.CLARIFY)) {
            ctx.store.reopenClarify(run.id(), clarifyId);
            throw ChatException.unsupported("this runtime cannot take clarify answers");
        }
        try {
            active.deliverAnswer(new ClarifyReply(run.id(), clarifyId, answer));
        } catch (RuntimeException e) {
            ctx.store.reopenClarify(run.id(), clarifyId);
            throw e instanceof ChatException ? (ChatException) e
                    : new ChatException(ErrorCode.RUNTIME_UNAVAILABLE, "the answer could not reach the runtime", e);
        }
        return AnswerResult.ACCEPTED;
    }

    /** The run's status, newest seq and pending questions. */
    public RunState state(Run run) {
        ActiveRun active = ctx.activeRuns.get(run.id());
        if (active != null) {
            return new RunState(active.published(), active.lastSeq(), active.pendingClarifyMessages());
        }
        List<ClarifyMessage> pending = new ArrayList<>();
        for (PendingClarify clarify : ctx.store.listPendingClarifies(run.id())) {
            ctx.store.findMessage(clarify.messageId())
                    .filter(ClarifyMessage.class::isInstance)
                    .map(ClarifyMessage.class::cast)
                    .ifPresentOrElse(pending::add, () -> pending.add(new ClarifyMessage(clarify.messageId(),
                            run.threadId(), run.id(), run.assistantMessageId(), MessageStatus.IN_PROGRESS,
                            clarify.createdAt(), clarify.clarifyId(), clarify.question(), clarify.choices(),
                            clarify.multiSelect(), List.of())));
        }
        return new RunState(run, ctx.store.lastSeq(run.id()), pending);
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

    private static final EnumSet<RunStatus> ACTIVE =
            EnumSet.of(RunStatus.QUEUED, RunStatus.RUNNING, RunStatus.WAITING_FOR_INPUT);

    /**
     * Brings the store in line after a restart: a run that was RUNNING becomes INTERRUPTED; a run waiting
     * for a clarify answer is re-attached when the runtime can, else INTERRUPTED; QUEUED runs start in
     * order.
     */
    public void recover() {
        for (Run run : ctx.store.findRuns(ACTIVE)) {
            try {
                recover(run);
            } catch (RuntimeException e) {
                log.error("Run {} could not be recovered", run.id(), e);
            }
        }
    }

    private void recover(Run run) {
        long base = Math.max(ctx.store.lastSeq(run.id()), ctx.store.reservedSeq(run.id()));
        List<Message> initial = new ArrayList<>();
        if (run.userMessageId() != null) {
            ctx.store.findMessage(run.userMessageId()).ifPresent(initial::add);
        }
        ctx.store.findMessage(run.assistantMessageId()).ifPresent(initial::add);
        ActiveRun active = new ActiveRun(ctx, run, initial, base, base, this::onFinished);
        List<RunEvent> page;
        long cursor = 0;
        do {
            page = ctx.store.readEvents(run.id(), cursor, ctx.limits.replayPageSize());
            active.replayStored(page);
            if (!page.isEmpty()) {
                cursor = page.get(page.size() - 1).seq();
            }
        } while (!page.isEmpty());

        if (run.status() == RunStatus.QUEUED) {
            ctx.activeRuns.put(run.id(), active);
            boolean start;
            synchronized (ctx.lanes) {
                start = ctx.lanes.current(run.threadId()) == null;
                if (start) {
                    ctx.lanes.occupy(run.threadId(), active);
                } else {
                    ctx.lanes.enqueue(run.threadId(), active, false);
                }
            }
            if (start) {
                launch(active);
            }
            log.info("Run {} was queued when the host stopped; it is queued again", run.id());
            return;
        }

        Optional<PendingClarify> waiting = ctx.store.listPendingClarifies(run.id()).stream()
                .filter(c -> c.resumeToken() != null)
                .findFirst();
        ctx.activeRuns.put(run.id(), active);
        synchronized (ctx.lanes) {
            ctx.lanes.occupy(run.threadId(), active);
        }
        if (run.status() == RunStatus.WAITING_FOR_INPUT && waiting.isPresent() && ctx.can(Capability.REATTACH)) {
            log.info("Run {} waits for a clarify answer; re-attaching to the runtime", run.id());
            active.reattach(waiting.get().resumeToken());
            return;
        }
        active.announce();
        active.forceEnd(RunStatus.INTERRUPTED, "the host stopped while the run was active");
        log.info("Run {} was active when the host stopped; it is INTERRUPTED", run.id());
    }

    /** Ends this process's part: running runs are INTERRUPTED, runs waiting on a re-attachable clarify stay. */
    public void close() {
        for (ActiveRun run : new ArrayList<>(ctx.activeRuns.values())) {
            Run now = run.snapshot();
            if (now.status() == RunStatus.WAITING_FOR_INPUT && ctx.can(Capability.REATTACH)) {
                run.detach();
                continue;
            }
            if (now.status() == RunStatus.QUEUED) {
                continue;
            }
            run.forceEnd(RunStatus.INTERRUPTED, "the host shut down while the run was active");
        }
        ctx.writer.close();
    }
}
