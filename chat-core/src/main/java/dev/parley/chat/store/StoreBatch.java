package dev.parley.chat.store;

import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Everything one {@link ChatStore#write} stores atomically: runs and messages to insert or replace (by
 * id), events to append, threads to touch, clarifies to insert, run leases to set and seq reservations to
 * raise (as {@link ChatStore#reserveSeq}: never lowered). The engine's batch writer gathers
 * many runs' work into one batch so that the hot path never waits for a commit per event.
 *
 * <p>Messages are stored in list order; a message's place in its thread is fixed by its first save.
 */
public record StoreBatch(
        List<ThreadTouch> threadTouches,
        List<Run> runs,
        List<Message> messages,
        List<RunEvent> events,
        List<PendingClarify> clarifies,
        List<RunLease> leases,
        List<SeqReservation> reservations) {

    /** Raise a run's seq reservation mark to {@code upTo} (see {@link ChatStore#reserveSeq}). */
    public record SeqReservation(String runId, long upTo) {
        public SeqReservation {
            Objects.requireNonNull(runId, "runId");
        }
    }

    public StoreBatch {
        threadTouches = List.copyOf(threadTouches);
        runs = List.copyOf(runs);
        messages = List.copyOf(messages);
        events = List.copyOf(events);
        clarifies = List.copyOf(clarifies);
        leases = List.copyOf(leases);
        reservations = List.copyOf(reservations);
    }

    public boolean isEmpty() {
        return threadTouches.isEmpty() && runs.isEmpty() && messages.isEmpty() && events.isEmpty() && clarifies.isEmpty()
                && leases.isEmpty() && reservations.isEmpty();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Collects a batch; not thread-safe. */
    public static final class Builder {
        private final List<ThreadTouch> threadTouches = new ArrayList<>();
        private final List<Run> runs = new ArrayList<>();
        private final List<Message> messages = new ArrayList<>();
        private final List<RunEvent> events = new ArrayList<>();
        private final List<PendingClarify> clarifies = new ArrayList<>();
        private final List<RunLease> leases = new ArrayList<>();
        private final List<SeqReservation> reservations = new ArrayList<>();

        public Builder touch(ThreadTouch touch) {
            threadTouches.add(touch);
            return this;
        }

        public Builder run(Run run) {
            runs.add(run);
            return this;
        }

        public Builder message(Message message) {
            messages.add(message);
            return this;
        }

        public Builder messages(List<? extends Message> more) {
            messages.addAll(more);
            return this;
        }

        public Builder event(RunEvent event) {
            events.add(event);
            return this;
        }

        public Builder events(List<RunEvent> more) {
            events.addAll(more);
            return this;
        }

        public Builder clarify(PendingClarify clarify) {
            clarifies.add(clarify);
            return this;
        }

        /** Sets a run's lease (after the run itself is stored). */
        public Builder lease(RunLease lease) {
            leases.add(lease);
            return this;
        }

        /** Raises a run's seq reservation mark, in the same transaction as the rest. */
        public Builder reserveSeq(String runId, long upTo) {
            reservations.add(new SeqReservation(runId, upTo));
            return this;
        }

        public StoreBatch build() {
            return new StoreBatch(threadTouches, runs, messages, events, clarifies, leases, reservations);
        }
    }
}
