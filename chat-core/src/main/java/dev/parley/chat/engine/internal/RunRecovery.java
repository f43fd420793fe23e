package dev.parley.chat.engine.internal;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.outbox.OutboxEntry;
import dev.parley.chat.outbox.OutboxEventType;
import dev.parley.chat.reduce.RunReducer;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.store.StoreBatch;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Takes over the runs a previous process (or, with other instances, a dead instance) left active in the
 * store. Where the runtime can re-attach, a run is followed again from its stored resume point — the place
 * in the runtime's stream its stored events reach ({@link ResumeTracker}), so that its log goes on without a
 * gap or a repeat — whether it streamed or waited for an answer the runtime asked (one waiting without a
 * stored point, from its input's resume token). A run of a runtime that keeps nothing across processes
 * ({@code Capability.RESUME}) that waited only for approvals the engine asked is continued from the store
 * ({@link RunResumption}): the approvals are waited for again, not asked again. A run that cannot be followed
 * is stopped in the runtime, then ends INTERRUPTED, so that the runtime does not finish a turn Parley shows
 * cut off: the runtime cannot re-attach, no point was stored, a tool the host side answers was running, it
 * waits only for inputs the engine asked and the runtime cannot continue from the store (their
 * continuation died with the process), or it waited and its answer was accepted but never logged (whether
 * it reached the runtime is unknown). QUEUED runs are queued again. A run whose reads
 * fail is tried again shortly, so that no run stays active in the store for good. Thread-safe.
 */
final class RunRecovery {
    private static final Logger log = LoggerFactory.getLogger(RunRecovery.class);
    /** Pause before a run that could not be recovered is tried again (alone on the store). */
    private static final long RETRY_MILLIS = 2_000;

    private final EngineContext ctx;
    private final RunManager manager;
    /** Runs this engine started before it found the left-overs (see {@link #startedHere}). */
    private final java.util.Set<String> startedHere = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private volatile boolean settled;

    RunRecovery(EngineContext ctx, RunManager manager) {
        this.ctx = ctx;
        this.manager = manager;
    }

    /**
     * Recovers every run the store holds as active that the last process left (alone on the store: they were
     * all this host's). Runs this engine started itself — it may have been working for a while when a retried
     * look finds them — are not left-overs: they are skipped.
     */
    void recoverAll() {
        List<Run> left;
        try {
            left = ctx.store.findRuns(RunManager.ACTIVE);
        } catch (RuntimeException e) {
            log.error("Looking for the runs the last process left failed; trying again shortly", e);
            retryRecovery(null);
            return;
        }
        settled = true;
        recoverEach(left.stream().filter(run -> !startedHere.contains(run.id())).toList());
        startedHere.clear();
    }

    /**
     * A run this engine started: until the left-overs were found (the first look may fail and be retried
     * while the engine already works), such a run must not be taken for one.
     */
    void startedHere(String runId) {
        if (!settled) {
            startedHere.add(runId);
        }
    }

    private void recoverEach(List<Run> left) {
        List<Run> failed = new ArrayList<>();
        for (Run run : left) {
            try {
                recoverOne(run);
            } catch (RuntimeException e) {
                log.error("Run {} could not be recovered; trying again shortly", run.id(), e);
                failed.add(run);
            }
        }
        if (!failed.isEmpty()) {
            retryRecovery(failed);
        }
    }

    /**
     * Tries the runs again later (all left-over runs when null): a run must not stay RUNNING for good. Each is
     * read afresh then ({@link #recoverOne}): it may have ended or been deleted meanwhile.
     */
    private void retryRecovery(@Nullable List<Run> runs) {
        ctx.timers.schedule(() -> {
            if (manager.isClosing()) {
                return;
            }
            if (runs == null) {
                recoverAll();
                return;
            }
            recoverEach(runs.stream().filter(r -> !ctx.activeRuns.containsKey(r.id())).toList());
        }, RETRY_MILLIS, TimeUnit.MILLISECONDS);
    }

    /**
     * The run's pending inputs plus the engine's approvals its log still shows open that the store holds
     * answered: an answer stored while the run had no holder, on its way to one. Its sender takes it back when
     * no holder takes it (the person sends it again; the same answer found stored is delivered then) or
     * delivers it once this run is followed, so the run waits for it again rather than being stopped for want
     * of a pending input. An answer to the runtime's own question keeps the older rule (it may have reached
     * the runtime already, so the run is not waited on).
     */
    private List<PendingInput> withAnswersInFlight(Run run, List<PendingInput> pending, List<RunEvent> stored) {
        if (run.status() != RunStatus.WAITING_FOR_INPUT) {
            return pending;
        }
        Set<String> open = new LinkedHashSet<>();
        for (RunEvent logged : stored) {
            if (logged.event() instanceof AgentStreamEvent.InputRequested asked) {
                open.add(asked.inputId());
            } else if (logged.event() instanceof AgentStreamEvent.InputResolved resolved) {
                open.remove(resolved.inputId());
            }
        }
        pending.forEach(input -> open.remove(input.inputId()));
        List<PendingInput> all = new ArrayList<>(pending);
        for (String inputId : open) {
            ctx.store.findInput(run.id(), inputId)
                    .filter(input -> input.state() == InputState.ANSWERED && input.resumeToken() == null)
                    .ifPresent(all::add);
        }
        return all;
    }

    /**
     * Recovers one run: everything is read from the store first, so that a failing store leaves the run
     * as it was (to be tried again); once the run is in memory, its end is guaranteed by {@link ActiveRun}.
     */
    void recoverOne(Run found) {
        Optional<Run> current = ctx.store.findRun(found.id());
        if (current.isEmpty() || !RunManager.ACTIVE.contains(current.get().status())) {
            return; // deleted, or ended, since it was found
        }
        Run run = current.get();
        long base = Math.max(ctx.store.lastSeq(run.id()), ctx.store.reservedSeq(run.id()));
        List<Message> initial = new ArrayList<>();
        if (run.userMessageId() != null) {
            ctx.store.findMessage(run.userMessageId()).ifPresent(initial::add);
        }
        ctx.store.findMessage(run.assistantMessageId()).ifPresent(initial::add);
        List<RunEvent> stored = new ArrayList<>();
        List<RunEvent> page;
        long cursor = 0;
        do {
            page = ctx.store.readEvents(run.id(), cursor, ctx.limits.replayPageSize());
            stored.addAll(page);
            if (!page.isEmpty()) {
                cursor = page.get(page.size() - 1).seq();
            }
        } while (!page.isEmpty());
        List<PendingInput> stillPending = run.status() != RunStatus.WAITING_FOR_INPUT ? List.of()
                : ctx.store.listPendingInputs(run.id());
        Optional<StoreBatch.ResumePoint> point = run.status() == RunStatus.QUEUED ? Optional.empty()
                : ctx.store.findResumePoint(run.id());
        Map<String, String> startHeaders = manager.keepsStartContexts() ? ctx.store.findStartContext(run.id()) : Map.of();

        List<PendingInput> pending = withAnswersInFlight(run, stillPending, stored);
        Optional<PendingInput> waiting = pending.stream().filter(input -> input.resumeToken() != null).findFirst();

        if (stored.stream().anyMatch(event -> event.event().isTerminal())) {
            settleLoggedEnd(run, stored);
            return;
        }
        ActiveRun active = new ActiveRun(ctx, run, initial, base, base, manager);
        active.replayStored(stored);
        boolean resumable = run.status() == RunStatus.WAITING_FOR_INPUT && waiting.isEmpty()
                && active.awaitApprovalsAgain(pending);
        boolean start;
        synchronized (ctx.lanes) {
            if (manager.isClosing() || ctx.activeRuns.containsKey(run.id())) {
                return;
            }
            ctx.activeRuns.put(run.id(), active);
            if (run.status() == RunStatus.QUEUED) {
                start = ctx.lanes.current(run.threadId()) == null;
                if (start) {
                    ctx.lanes.occupy(run.threadId(), active);
                } else {
                    ctx.lanes.enqueue(run.threadId(), active);
                }
            } else {
                start = false;
                ctx.lanes.occupy(run.threadId(), active);
            }
        }
        if (run.status() == RunStatus.QUEUED) {
            log.info("Run {} was queued when the host stopped; it is queued again", run.id());
            manager.resumeQueuedContext(active, startHeaders);
            if (start) {
                manager.launch(active);
            }
            return;
        }
        manager.followInOwnContext(active, startHeaders,
                () -> followAgain(run, active, pending, waiting, point, resumable));
    }

    /** Follows a recovered run ({@code run} as stored) again in the runtime, or stops it there: it ends INTERRUPTED. */
    private void followAgain(Run run, ActiveRun active, List<PendingInput> pending, Optional<PendingInput> waiting,
            Optional<StoreBatch.ResumePoint> point, boolean resumable) {
        ctx.listener.runStarted(active.snapshot());
        if (resumable) {
            log.info("Run {} waits for the person's approval of a host action; continuing it from the store", run.id());
            active.resumeDeadlines(pending);
            active.resumeFromStore();
            return;
        }
        boolean followable = ctx.can(Capability.REATTACH) && point.map(StoreBatch.ResumePoint::followable).orElse(true);
        if (waiting.isPresent() && followable) {
            log.info("Run {} waits for an answer; re-attaching to the runtime", run.id());
            active.reattach(point.map(StoreBatch.ResumePoint::token).orElse(waiting.get().resumeToken()),
                    point.map(StoreBatch.ResumePoint::skip).orElse(0L));
            active.resumeDeadlines(pending);
            return;
        }
        if (run.status() == RunStatus.RUNNING && point.isPresent() && followable && !active.runsHostTool()) {
            log.info("Run {} was streaming when the host stopped; re-attaching to the runtime after {} ({} stored)",
                    run.id(), point.get().token(), point.get().skip());
            active.reattach(point.get().token(), point.get().skip());
            return;
        }
        log.info("Run {} was active when the host stopped and cannot be followed; stopping it, it is INTERRUPTED",
                run.id());
        OrphanStops.stopThenInterrupt(ctx, active, point.map(StoreBatch.ResumePoint::token).orElse(null),
                "the host stopped while the run was active");
    }

    /**
     * A run whose end is logged while its record still says it is active (the record's write was lost after
     * the end's): it ended, so it is not followed again (that would log a second end). Its record and its
     * messages are stored as its log says they ended.
     */
    private void settleLoggedEnd(Run run, List<RunEvent> stored) {
        RunReducer reducer = new RunReducer();
        stored.forEach(reducer::apply);
        RunEvent end = stored.stream().filter(event -> event.event().isTerminal()).findFirst().orElseThrow();
        Run record = ActiveRun.endedRecord(run, reducer, Instant.ofEpochMilli(end.timestamp()));
        log.warn("Run {} logged its end ({}) but its record still said {}; storing the record as ended", run.id(),
                record.status(), run.status());
        StoreBatch.Builder batch = StoreBatch.builder().fence(ctx.fence());
        reducer.messages().forEach(batch::message);
        if (ctx.outbox != null) {
            // the end's notifications go with its record (an entry stored already is left as it is)
            for (String destination : ctx.outbox.destinations(OutboxEventType.ofEnd(record.status()))) {
                batch.outbox(OutboxEntry.runEnded(record, destination));
            }
        }
        ctx.store.write(batch.run(record).build());
    }
}
