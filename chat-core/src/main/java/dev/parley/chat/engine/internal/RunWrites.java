package dev.parley.chat.engine.internal;

import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.outbox.OutboxEntry;
import dev.parley.chat.outbox.OutboxEventType;
import dev.parley.chat.outbox.OutboxRouting;
import dev.parley.chat.reduce.RunReducer;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadTouch;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What one active run has logged and not yet handed to the batch writer, and its seq reservation marks.
 * Not thread-safe: every call is made holding the run's monitor.
 */
final class RunWrites {
    private static final Logger log = LoggerFactory.getLogger(RunWrites.class);

    private final EngineContext ctx;
    private final String runId;
    private List<RunEvent> events = new ArrayList<>();
    private final List<PendingInput> inputs = new ArrayList<>();
    private final List<ThreadTouch> touches = new ArrayList<>();
    private boolean runChanged;
    private boolean messagesDue;
    private long lastMessageFlush;
    /** The run's end has gone into a batch with its outbox entries (they are written once). */
    private boolean endAnnounced;

    /** The store's reservation mark as known stored: no event above it may be published. */
    private long reservedSeq;
    /** The mark asked of the batch writer and not yet stored (0: none asked). */
    private long requestedReservation;
    /** The mark to put into the next batch (0: none). */
    private long pendingReservation;

    /**
     * What one run gave to a batch.
     *
     * @param lastSeq the newest event in the batch, 0 if none
     * @param reservedUpTo the seq reservation mark in the batch, 0 if none
     * @param stillDirty work was held back: events beyond the caps, or message changes not due yet (they ride
     *     in a later batch)
     * @param bytes the estimated size of what was moved ({@link StoredSize})
     */
    record Drained(long lastSeq, long reservedUpTo, boolean stillDirty, long bytes) {
    }

    RunWrites(EngineContext ctx, String runId, long reservedSeq) {
        this.ctx = ctx;
        this.runId = runId;
        this.reservedSeq = reservedSeq;
        this.lastMessageFlush = ctx.clock.millis();
    }

    void event(RunEvent event) {
        events.add(event);
    }

    void input(PendingInput input) {
        inputs.add(input);
        messagesDue = true;
    }

    void touch(ThreadTouch touch) {
        touches.add(touch);
    }

    /** The run's record changed (its status, its end): store it with the next batch. */
    void runChanged() {
        runChanged = true;
    }

    /** Store the reducer's message changes with the next batch rather than at the next message interval. */
    void messagesNow() {
        messagesDue = true;
    }

    /**
     * Makes sure the store's reservation mark covers {@code seq} before the event can be seen, so that
     * after a crash new events are numbered above anything a client holds. The next block is asked of the
     * batch writer as soon as less than a block is left; only a writer a whole block behind (or a run taken
     * over from another instance) makes the event path wait for the store here.
     *
     * @param ending the event ends the run: if the store cannot reserve, it is logged regardless (its seq
     *     still lies within a block of the stored mark, and nothing follows it)
     * @throws RuntimeException the store's failure, unless {@code ending}
     */
    void reserveFor(long seq, boolean ending) {
        if (seq > reservedSeq) {
            long upTo = seq + EngineContext.SEQ_RESERVATION_BLOCK;
            try {
                ctx.store.reserveSeq(runId, upTo);
            } catch (RuntimeException e) {
                if (!ending) {
                    throw e;
                }
                log.warn("Run {}: reserving seqs failed; logging its end at seq {} regardless", runId, seq, e);
                return;
            }
            reservedSeq = upTo;
        } else if (reservedSeq - seq < EngineContext.SEQ_RESERVATION_BLOCK && requestedReservation <= reservedSeq) {
            requestedReservation = reservedSeq + EngineContext.SEQ_RESERVATION_BLOCK;
            pendingReservation = requestedReservation;
        }
    }

    /** Forgets everything not yet handed over; returns how many events that dropped. */
    int dropAll() {
        int dropped = events.size();
        events = new ArrayList<>();
        inputs.clear();
        touches.clear();
        runChanged = false;
        return dropped;
    }

    /**
     * Moves pending work into a batch: the oldest events, as many as fit in the caps (at least one), then,
     * once every event is in, the run's record, due message changes, inputs and thread touches. So a batch
     * holds a prefix of the run's log, and what the run's record and messages say is never ahead of the
     * events stored with or before them. A pending seq reservation always goes in. With an outbox
     * ({@link EngineContext#outbox}), the run's terminal record and each input go in with their outbox entries.
     *
     * @param maxEvents the most events to move
     * @param maxBytes the most estimated bytes to move ({@link StoredSize}); the first event goes in regardless
     */
    Drained drainInto(StoreBatch.Builder batch, long nowMillis, RunReducer reducer, Supplier<Run> record,
            int maxEvents, long maxBytes) {
        long last = 0;
        long bytes = 0;
        int count = 0;
        if (!events.isEmpty()) {
            int size = events.size();
            while (count < size && count < maxEvents) {
                int next = StoredSize.of(events.get(count));
                if (count > 0 && bytes + next > maxBytes) {
                    break;
                }
                bytes += next;
                count++;
            }
            List<RunEvent> taken;
            if (count == size) {
                taken = events;
                events = new ArrayList<>();
            } else {
                taken = new ArrayList<>(events.subList(0, count));
                events = new ArrayList<>(events.subList(count, size));
            }
            batch.events(taken);
            last = taken.get(taken.size() - 1).seq();
        }
        long reservation = pendingReservation;
        if (reservation > 0) {
            batch.reserveSeq(runId, reservation);
            pendingReservation = 0;
        }
        if (!events.isEmpty()) {
            return new Drained(last, reservation, true, bytes);
        }
        OutboxRouting outbox = ctx.outbox;
        if (runChanged) {
            Run current = record.get();
            batch.run(current);
            runChanged = false;
            if (outbox != null && current.status().isTerminal() && !endAnnounced) {
                // in the batch that stores the run's end: written together or not at all
                endAnnounced = true;
                for (String destination : outbox.destinations(OutboxEventType.ofEnd(current.status()))) {
                    batch.outbox(OutboxEntry.runEnded(current, destination));
                }
            }
        }
        boolean due = messagesDue || nowMillis - lastMessageFlush >= ctx.limits.messageFlushInterval().toMillis();
        if (due && reducer.hasChanges()) {
            List<? extends Message> changed = reducer.takeChanged();
            for (Message message : changed) {
                bytes += StoredSize.of(message);
            }
            batch.messages(changed);
            lastMessageFlush = nowMillis;
        }
        messagesDue = false;
        if (outbox != null && !inputs.isEmpty()) {
            List<String> destinations = outbox.destinations(OutboxEventType.INPUT_REQUESTED);
            if (!destinations.isEmpty()) {
                Run current = record.get();
                for (PendingInput input : inputs) {
                    destinations.forEach(destination -> batch.outbox(OutboxEntry.inputRequested(current, input,
                            destination)));
                }
            }
        }
        inputs.forEach(batch::input);
        inputs.clear();
        touches.forEach(batch::touch);
        touches.clear();
        return new Drained(last, reservation, reducer.hasChanges(), bytes);
    }

    /** True while events wait to be moved into a batch. */
    boolean hasEvents() {
        return !events.isEmpty();
    }

    /** A reservation mark handed over in a batch is stored. */
    void reserved(long upTo) {
        reservedSeq = Math.max(reservedSeq, upTo);
    }
}
