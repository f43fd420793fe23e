package dev.parley.chat.store;

import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.outbox.OutboxEntry;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Everything one {@link ChatStore#write} stores atomically: runs and messages to insert or replace (by
 * id), events to append, threads to touch, pending inputs to insert, run leases to set, seq reservations to
 * raise (as {@link ChatStore#reserveSeq}: never lowered) and runs' resume points to replace. The engine's batch writer gathers
 * many runs' work into one batch so that the hot path never waits for a commit per event.
 *
 * <p>Messages are stored in list order; a message's place in its thread is fixed by its first save.
 *
 * <p>A batch may be <em>fenced</em> by a host instance: it is then stored only if no run it writes (in
 * {@link #runs}, {@link #messages}, {@link #events}, {@link #inputs}, {@link #reservations} or
 * {@link #resumePoints}) is leased
 * by another instance; otherwise nothing of it is stored and {@link ChatStore#write} throws
 * {@link LeaseLostException}. A run the store does not hold yet, or one without a lease owner, passes.
 *
 * <p>A batch may also <em>expect</em> a thread's active branch: it is then stored only if the thread's active
 * leaf ({@link dev.parley.chat.model.ChatThread#activeLeafId()}) is still the one the writer read; otherwise
 * nothing of it is stored and {@link ChatStore#write} throws {@link BranchMovedException}. A new message whose
 * parent was read as the branch's last message cannot land beside a message another host instance added.
 *
 * <p>A batch may carry {@linkplain #outbox outbox entries} (notifications of a run's end or input request,
 * {@link dev.parley.chat.outbox}): the engine adds them only when it was given an
 * {@link dev.parley.chat.outbox.OutboxRouting}, and only a store implementing
 * {@link dev.parley.chat.outbox.OutboxStore} receives such a batch. They are stored in the same transaction,
 * after the rest; an entry whose thread does not exist fails the batch with {@link ThreadGoneException} (its run).
 *
 * @param fence the instance whose leases the batch's runs must be under, or null for no check
 * @param expectedLeaf the active leaf a thread must still have for the batch to be stored, or null for no check
 * @param outbox outbox entries to store with the batch (empty unless the engine has an outbox routing)
 */
public record StoreBatch(
        List<ThreadTouch> threadTouches,
        List<Run> runs,
        List<Message> messages,
        List<RunEvent> events,
        List<PendingInput> inputs,
        List<RunLease> leases,
        List<SeqReservation> reservations,
        List<ResumePoint> resumePoints,
        @Nullable String fence,
        @Nullable ExpectedLeaf expectedLeaf,
        List<OutboxEntry> outbox) {

    /**
     * The batch is stored only while thread {@code threadId}'s active leaf is {@code leafId} (null: the thread
     * has none yet).
     */
    public record ExpectedLeaf(String threadId, @Nullable String leafId) {
        public ExpectedLeaf {
            Objects.requireNonNull(threadId, "threadId");
        }
    }

    /** Raise a run's seq reservation mark to {@code upTo} (see {@link ChatStore#reserveSeq}). */
    public record SeqReservation(String runId, long upTo) {
        public SeqReservation {
            Objects.requireNonNull(runId, "runId");
        }
    }

    /**
     * Where a run's runtime stream stands, as far as the run's events in the store go: a stream re-attached
     * with {@code token} ({@link dev.parley.chat.runtime.RuntimeAdapter#reattach}) brings first {@code skip}
     * items whose events are stored already, then new ones. Replaces the run's previous one; it is stored in
     * the batch that stores the events it covers, so that it never says more or less than the store holds.
     *
     * @param token the runtime's resume token ({@link dev.parley.chat.runtime.ResumableSubscriber})
     * @param skip how many of the runtime's items after the token are stored already (at least 0)
     * @param followable a re-attached stream may start here; false where the token only names the run on the
     *     runtime's side, for stopping it (the runtime cannot re-attach, or the run offers tools the person's
     *     browser runs, which are not stored)
     */
    public record ResumePoint(String runId, String token, long skip, boolean followable) {
        public ResumePoint {
            Objects.requireNonNull(runId, "runId");
            Objects.requireNonNull(token, "token");
            if (skip < 0) {
                throw new IllegalArgumentException("skip must not be negative, got " + skip);
            }
        }

        /** A followable point. */
        public ResumePoint(String runId, String token, long skip) {
            this(runId, token, skip, true);
        }
    }

    public StoreBatch {
        threadTouches = List.copyOf(threadTouches);
        runs = List.copyOf(runs);
        messages = List.copyOf(messages);
        events = List.copyOf(events);
        inputs = List.copyOf(inputs);
        leases = List.copyOf(leases);
        reservations = List.copyOf(reservations);
        resumePoints = List.copyOf(resumePoints);
        outbox = List.copyOf(outbox);
    }

    /** A batch without outbox entries. */
    public StoreBatch(List<ThreadTouch> threadTouches, List<Run> runs, List<Message> messages, List<RunEvent> events,
            List<PendingInput> inputs, List<RunLease> leases, List<SeqReservation> reservations,
            List<ResumePoint> resumePoints, @Nullable String fence, @Nullable ExpectedLeaf expectedLeaf) {
        this(threadTouches, runs, messages, events, inputs, leases, reservations, resumePoints, fence, expectedLeaf,
                List.of());
    }

    /** The ids of the runs this batch writes (what a {@link #fence} is checked against), in first-seen order. */
    public Set<String> writtenRunIds() {
        Set<String> ids = new LinkedHashSet<>();
        runs.forEach(run -> ids.add(run.id()));
        messages.forEach(message -> ids.add(message.runId()));
        events.forEach(event -> ids.add(event.runId()));
        inputs.forEach(input -> ids.add(input.runId()));
        reservations.forEach(reservation -> ids.add(reservation.runId()));
        resumePoints.forEach(point -> ids.add(point.runId()));
        return ids;
    }

    /** True when the batch stores nothing (a fence alone stores nothing). */
    public boolean isEmpty() {
        return threadTouches.isEmpty() && runs.isEmpty() && messages.isEmpty() && events.isEmpty() && inputs.isEmpty()
                && leases.isEmpty() && reservations.isEmpty() && resumePoints.isEmpty() && outbox.isEmpty();
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
        private final List<PendingInput> inputs = new ArrayList<>();
        private final List<RunLease> leases = new ArrayList<>();
        private final List<SeqReservation> reservations = new ArrayList<>();
        private final List<ResumePoint> resumePoints = new ArrayList<>();
        private final List<OutboxEntry> outbox = new ArrayList<>();
        private @Nullable String fence;
        private @Nullable ExpectedLeaf expectedLeaf;

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

        public Builder input(PendingInput input) {
            inputs.add(input);
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

        /** Replaces a run's resume point, in the same transaction as the events it covers. */
        public Builder resumePoint(ResumePoint point) {
            resumePoints.add(point);
            return this;
        }

        /** Stores an outbox entry with the batch, in its transaction (see the class comment). */
        public Builder outbox(OutboxEntry entry) {
            outbox.add(entry);
            return this;
        }

        /**
         * Stores the batch only while no run in it is leased by an instance other than {@code instanceId}
         * (null: no such check).
         */
        public Builder fence(@Nullable String instanceId) {
            this.fence = instanceId;
            return this;
        }

        /** Stores the batch only while the thread's active leaf is still {@code leafId} (see the class comment). */
        public Builder expectActiveLeaf(String threadId, @Nullable String leafId) {
            this.expectedLeaf = new ExpectedLeaf(threadId, leafId);
            return this;
        }

        /** Appends everything another batch stores, after what this one holds (its fence is not taken). */
        public Builder add(StoreBatch other) {
            threadTouches.addAll(other.threadTouches());
            runs.addAll(other.runs());
            messages.addAll(other.messages());
            events.addAll(other.events());
            inputs.addAll(other.inputs());
            leases.addAll(other.leases());
            reservations.addAll(other.reservations());
            resumePoints.addAll(other.resumePoints());
            outbox.addAll(other.outbox());
            return this;
        }

        public StoreBatch build() {
            return new StoreBatch(threadTouches, runs, messages, events, inputs, leases, reservations, resumePoints,
                    fence, expectedLeaf, outbox);
        }
    }
}
