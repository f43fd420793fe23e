package dev.parley.chat.engine.internal;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.store.LeaseLostException;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadGoneException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The batch writer's last resort for one run's part that keeps failing on its own: the part written row by
 * row, so that what the store refuses is found and left out while the rest is stored. A row refused while
 * the store takes other writes is written once more (the store may have come back in between), then left
 * out; a left-out event is replaced by a status event saying so, so the run's log has no gap. The record of
 * a run that ends is never left out: refused twice, the part is kept for later, like a resume point. Used by
 * the batch writer's thread only, holding its flush lock. Resume points are written last
 * ({@link #writeResumePoints}).
 */
final class RowByRowWrite {
    private static final Logger log = LoggerFactory.getLogger(RowByRowWrite.class);

    /** How writing the part ended. */
    sealed interface Outcome permits Settled, Kept, LeaseLost, ThreadGone {
    }

    /** Everything the store takes is stored; {@code refused} describes each row left out (empty if none). */
    record Settled(List<String> refused) implements Outcome {
    }

    /**
     * The store takes no writes at all, or refuses a row that may not be left out: nothing is left out, the
     * part is kept for later.
     */
    record Kept() implements Outcome {
    }

    /** Another instance holds the lease of these runs: the part is to be dropped. */
    record LeaseLost(Set<String> runIds) implements Outcome {
    }

    /** The thread of these runs was deleted: the part is to be dropped, nothing of it may be stored. */
    record ThreadGone(Set<String> runIds) implements Outcome {
    }

    private final EngineContext ctx;

    RowByRowWrite(EngineContext ctx) {
        this.ctx = ctx;
    }

    /** Writes {@code batch}, a part of run {@code runId}, row by row. Never throws. */
    Outcome write(StoreBatch batch, String runId) {
        try {
            List<StoreBatch> refused = writeEach(rows(batch));
            if (!refused.isEmpty()) {
                if (!storeTakesWrites(runId)) {
                    return new Kept();
                }
                refused = writeEach(refused);
                if (refused.stream().anyMatch(RowByRowWrite::endsARun)) {
                    return new Kept();
                }
            }
            if (!writeResumePoints(batch)) {
                return new Kept();
            }
            List<String> described = new ArrayList<>();
            for (StoreBatch row : refused) {
                described.add(describe(row));
                for (RunEvent event : row.events()) {
                    recordRefusedEvent(event);
                }
            }
            return new Settled(described);
        } catch (LeaseLostException e) {
            return new LeaseLost(e.runIds());
        } catch (ThreadGoneException e) {
            return new ThreadGone(e.runIds());
        }
    }

    /**
     * Writes each row in a transaction of its own; returns those the store refused.
     *
     * @throws LeaseLostException if another instance holds the run's lease
     * @throws ThreadGoneException if the run's thread was deleted
     */
    private List<StoreBatch> writeEach(List<StoreBatch> rows) {
        List<StoreBatch> refused = new ArrayList<>();
        for (StoreBatch row : rows) {
            try {
                ctx.store.write(row);
            } catch (LeaseLostException | ThreadGoneException e) {
                throw e;
            } catch (RuntimeException e) {
                refused.add(row);
            }
        }
        return refused;
    }

    /**
     * The part's resume points, once everything else of it is stored (or left out for good, as a live stream
     * leaves it out too): a point stored ahead of its events would make a re-attached stream skip items the
     * store does not hold. A point refused twice keeps the part (false): stored later, with its events.
     */
    private boolean writeResumePoints(StoreBatch batch) {
        if (batch.resumePoints().isEmpty()) {
            return true;
        }
        StoreBatch.Builder points = row(batch);
        batch.resumePoints().forEach(points::resumePoint);
        StoreBatch row = points.build();
        return writeEach(List.of(row)).isEmpty() || writeEach(List.of(row)).isEmpty();
    }

    /** A write that changes nothing: whether the store takes writes for this run at all. */
    private boolean storeTakesWrites(String runId) {
        try {
            ctx.store.reserveSeq(runId, 0);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Keeps the refused event's seq in the log, as a status event saying what was left out. */
    private void recordRefusedEvent(RunEvent event) {
        RunEvent placeholder = new RunEvent(event.runId(), event.seq(), event.timestamp(),
                new AgentStreamEvent.StatusUpdate(event.runId() + ":store:" + event.seq(), "error",
                        "An event of this run (" + event.type() + ", seq " + event.seq()
                                + ") could not be stored and was left out."));
        try {
            ctx.store.write(StoreBatch.builder().event(placeholder).fence(ctx.fence()).build());
        } catch (RuntimeException e) {
            log.error("Run {}: recording the refused event {} failed too; its seq stays empty", event.runId(),
                    event.seq(), e);
        }
    }

    /**
     * The batch cut into batches of one row each, in the order a write stores them, but for the record of a
     * run that ends: it comes after the part's messages, events and inputs, as in the batches the writer
     * makes (a run's record is never ahead of what is stored with or before it). Written first, it said the
     * run had ended while its end event was not stored yet: a subscriber reading the store would complete
     * without the end, a compaction would take the run, and the part's inputs, stored after it, would stay
     * pending on an ended run. Resume points apart. Outbox entries go with the row that causes them: a run's
     * end with its terminal record, an input request with its input.
     */
    private static List<StoreBatch> rows(StoreBatch batch) {
        List<StoreBatch> rows = new ArrayList<>();
        batch.threadTouches().forEach(touch -> rows.add(row(batch).touch(touch).build()));
        batch.runs().stream().filter(run -> !run.status().isTerminal())
                .forEach(run -> rows.add(row(batch).run(run).build()));
        batch.messages().forEach(message -> rows.add(row(batch).message(message).build()));
        batch.events().forEach(event -> rows.add(row(batch).event(event).build()));
        batch.inputs().forEach(input -> {
            StoreBatch.Builder row = row(batch).input(input);
            batch.outbox().stream().filter(entry -> input.runId().equals(entry.runId())
                    && input.inputId().equals(entry.inputId())).forEach(row::outbox);
            rows.add(row.build());
        });
        batch.runs().stream().filter(run -> run.status().isTerminal()).forEach(run -> {
            StoreBatch.Builder row = row(batch).run(run);
            batch.outbox().stream().filter(entry -> run.id().equals(entry.runId()) && entry.inputId() == null)
                    .forEach(row::outbox);
            rows.add(row.build());
        });
        batch.leases().forEach(lease -> rows.add(row(batch).lease(lease).build()));
        batch.reservations().forEach(r -> rows.add(row(batch).reserveSeq(r.runId(), r.upTo()).build()));
        return rows;
    }

    /**
     * Whether the row is the record of a run that ends. It is never left out: with its end event stored and
     * its record still active, the run would hold its thread in the store, and be followed again (and end a
     * second time) after a restart. The part is kept and written again later instead.
     */
    private static boolean endsARun(StoreBatch row) {
        return row.runs().stream().anyMatch(run -> run.status().isTerminal());
    }

    private static StoreBatch.Builder row(StoreBatch of) {
        return StoreBatch.builder().fence(of.fence());
    }

    private static String describe(StoreBatch row) {
        if (!row.events().isEmpty()) {
            RunEvent event = row.events().get(0);
            return "event " + event.seq() + " (" + event.type() + ")";
        }
        if (!row.messages().isEmpty()) {
            return "message " + row.messages().get(0).id();
        }
        if (!row.runs().isEmpty()) {
            return "the run's record (" + row.runs().get(0).status() + ")";
        }
        if (!row.inputs().isEmpty()) {
            return "input " + row.inputs().get(0).inputId();
        }
        if (!row.threadTouches().isEmpty()) {
            return "the thread's activity";
        }
        return "its lease or seq reservation";
    }
}
