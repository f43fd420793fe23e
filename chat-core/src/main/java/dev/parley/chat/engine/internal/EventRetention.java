package dev.parley.chat.engine.internal;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.ErrorInfo;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.ChatStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Compacts the event logs of runs that ended long ago: a log of thousands of token deltas becomes four
 * events — the run's start, a snapshot of its messages as they ended, a status line saying the log was
 * compacted and when, and its end — so a replay still shows the run (and says so) while the store keeps
 * only its messages' worth. The snapshot holds the answer's newest
 * {@link dev.parley.chat.engine.EngineLimits#maxStepsPerAnswer()} steps, as a thread view shows them, and the
 * note says how many older ones it leaves out (they stay stored). Runs that ended recently are left alone.
 * Thread-safe.
 */
public final class EventRetention {
    private static final Logger log = LoggerFactory.getLogger(EventRetention.class);
    private static final int BATCH = 100;

    private final EngineContext ctx;

    public EventRetention(EngineContext ctx) {
        this.ctx = ctx;
    }

    /** Compacts every run that ended before {@code endedBefore}, a batch at a time; returns how many. */
    public int compactRunsEndedBefore(Instant endedBefore) {
        int compacted = 0;
        List<Run> batch;
        do {
            batch = ctx.store.findRunsToCompact(endedBefore, BATCH);
            for (Run run : batch) {
                compact(run);
                compacted++;
            }
        } while (batch.size() == BATCH);
        if (compacted > 0) {
            log.info("Compacted the event logs of {} run(s) that ended before {}", compacted, endedBefore);
        }
        return compacted;
    }

    /**
     * Replaces the run's log with its start, a snapshot, a note and its end, reading four events whatever
     * the log's length: the first, the last, and (for a log of at most three) the log itself. A log whose
     * last event is not an end (its end was never stored) gets one made from the run's stored outcome,
     * numbered after every seq a client may hold.
     */
    private void compact(Run run) {
        ChatStore store = ctx.store;
        long last = store.lastSeq(run.id());
        List<RunEvent> start = store.readEvents(run.id(), 0, 1);
        List<RunEvent> end = last == 0 ? List.of() : store.readEvents(run.id(), last - 1, 1);
        List<RunEvent> kept = new ArrayList<>();
        if (start.isEmpty() || end.isEmpty() || end.get(0).seq() <= start.get(0).seq() + 2) {
            kept.addAll(store.readEvents(run.id(), 0, 3));
        } else {
            RunEvent started = start.get(0);
            RunEvent ended = end.get(0).event().isTerminal() ? end.get(0) : new RunEvent(run.id(),
                    Math.max(last, store.reservedSeq(run.id())) + 1,
                    run.finishedAt() != null ? run.finishedAt().toEpochMilli() : end.get(0).timestamp(), endOf(run));
            Snapshot snapshot = snapshotOf(run);
            kept.add(started);
            kept.add(new RunEvent(run.id(), started.seq() + 1, started.timestamp(), new AgentStreamEvent.MessagesSnapshot(
                    run.threadId(), run.id(), snapshot.messages(), run.guardrailsFailureReason())));
            kept.add(new RunEvent(run.id(), started.seq() + 2, ended.timestamp(), new AgentStreamEvent.StatusUpdate(
                    run.id() + ":retention", "info", "This run's event log was compacted on " + ctx.now()
                            + " (its events were older than the retention period); its messages are shown as they "
                            + "ended" + (snapshot.omittedSteps() == 0 ? "." : ", without its " + snapshot.omittedSteps()
                            + " oldest steps (the conversation's export has every step)."))));
            kept.add(ended);
        }
        store.compactRunEvents(run.id(), kept, ctx.now());
    }

    /** The end event the run's stored outcome stands for. */
    private static AgentStreamEvent endOf(Run run) {
        ErrorInfo error = run.error();
        if (run.status() == RunStatus.FAILED) {
            return error == null ? new AgentStreamEvent.RunFailed("INTERNAL", "the run failed")
                    : new AgentStreamEvent.RunFailed(error.code(), error.message(), error.retryAfterSeconds());
        }
        return new AgentStreamEvent.RunFinished(run.status(),
                run.status() == RunStatus.SUCCEEDED || error == null ? null : error.message());
    }

    /** A compacted run's messages as they ended, and how many of its oldest steps they leave out. */
    private record Snapshot(List<Message> messages, int omittedSteps) {
    }

    /**
     * The run's messages as stored: its user message (if any), its answer, and the answer's newest
     * {@link dev.parley.chat.engine.EngineLimits#maxStepsPerAnswer()} steps (a bounded read: that many and one
     * more, to see whether the run has more, which are then counted).
     */
    private Snapshot snapshotOf(Run run) {
        List<String> top = new ArrayList<>();
        if (run.userMessageId() != null) {
            top.add(run.userMessageId());
        }
        top.add(run.assistantMessageId());
        List<Message> messages = new ArrayList<>(ctx.store.findMessages(top));
        int shown = ctx.limits.maxStepsPerAnswer();
        List<Message> steps = ctx.store.listNewestStepMessages(List.of(run.id()), ThreadViews.oneMore(shown));
        int omitted = 0;
        if (steps.size() > shown) {
            steps = steps.subList(steps.size() - shown, steps.size());
            omitted = Math.max(1, ctx.store.countStepMessages(List.of(run.id())).getOrDefault(run.id(), 0) - shown);
        }
        messages.addAll(steps);
        return new Snapshot(messages, omitted);
    }
}
