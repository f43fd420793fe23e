package dev.parley.chat.store;

import dev.parley.chat.ChatException;
import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.UserMessage;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * {@link InMemoryChatStore}'s {@link ChatStore#write}: the checks that may refuse a batch, all made before
 * anything is stored (the fence, every row's thread and run, one active run per thread, client message ids),
 * then each kind of the
 * batch stored by its part, in this order: touches, runs, messages, events, inputs, seq reservations,
 * resume points, leases, outbox entries. Not thread-safe: the store calls it under its one lock, which makes the batch atomic.
 */
final class InMemoryBatchWrite {
    private final InMemoryThreads threads;
    private final InMemoryMessages messages;
    private final InMemoryRuns runs;
    private final InMemoryInputs inputs;
    private final InMemoryOutbox outbox;

    InMemoryBatchWrite(InMemoryThreads threads, InMemoryMessages messages, InMemoryRuns runs, InMemoryInputs inputs,
            InMemoryOutbox outbox) {
        this.threads = threads;
        this.messages = messages;
        this.runs = runs;
        this.inputs = inputs;
        this.outbox = outbox;
    }

    /**
     * Stores the batch, or nothing of it.
     *
     * @throws LeaseLostException if the batch is fenced and another instance holds the lease of a run in it
     * @throws ThreadGoneException if a row belongs to a thread or run that does not exist
     * @throws BranchMovedException if the batch expects a thread's active leaf that moved
     * @throws ChatException CONFLICT for a second active run of a thread or a repeated client message id
     */
    void write(StoreBatch batch) {
        checkFence(batch);
        checkThreadsExist(batch);
        checkExpectedLeaf(batch);
        checkOneActiveRunPerThread(batch);
        checkClientMessageIds(batch);
        for (ThreadTouch touch : batch.threadTouches()) {
            threads.touch(touch);
        }
        for (Run run : batch.runs()) {
            runs.save(run);
        }
        for (Message message : batch.messages()) {
            messages.save(message);
        }
        for (RunEvent event : batch.events()) {
            runs.append(event);
        }
        for (PendingInput input : batch.inputs()) {
            inputs.save(input);
        }
        for (Run run : batch.runs()) {
            if (run.status().isTerminal()) {
                inputs.cancelPending(run.id(), run.finishedAt() != null ? run.finishedAt() : run.createdAt());
            }
        }
        for (StoreBatch.SeqReservation reservation : batch.reservations()) {
            runs.reserveSeq(reservation.runId(), reservation.upTo());
        }
        for (StoreBatch.ResumePoint point : batch.resumePoints()) {
            runs.saveResumePoint(point);
        }
        for (RunLease lease : batch.leases()) {
            runs.saveLease(lease);
        }
        batch.outbox().forEach(outbox::add);
    }

    private void checkExpectedLeaf(StoreBatch batch) {
        StoreBatch.ExpectedLeaf expected = batch.expectedLeaf();
        if (expected == null) {
            return;
        }
        String actual = threads.find(expected.threadId()).map(dev.parley.chat.model.ChatThread::activeLeafId).orElse(null);
        if (!java.util.Objects.equals(actual, expected.leafId())) {
            throw new BranchMovedException(expected.threadId(), expected.leafId(), actual);
        }
    }

    private void checkFence(StoreBatch batch) {
        if (batch.fence() == null) {
            return;
        }
        Set<String> lost = new LinkedHashSet<>();
        for (String runId : batch.writtenRunIds()) {
            RunLease lease = runs.findLease(runId);
            if (lease != null && !lease.instanceId().equals(batch.fence())) {
                lost.add(runId);
            }
        }
        if (!lost.isEmpty()) {
            throw new LeaseLostException(lost);
        }
    }

    /**
     * Refuses a batch with a run or message of a missing thread, or an event, input, seq reservation, resume
     * point or lease of a run that is neither stored nor in the batch (with an existing thread): a deleted thread stays deleted.
     */
    private void checkThreadsExist(StoreBatch batch) {
        Set<String> gone = new LinkedHashSet<>();
        Set<String> batchRuns = new HashSet<>();
        for (Run run : batch.runs()) {
            if (threads.exists(run.threadId())) {
                batchRuns.add(run.id());
            } else {
                gone.add(run.id());
            }
        }
        for (Message message : batch.messages()) {
            if (!threads.exists(message.threadId())) {
                gone.add(message.runId());
            }
        }
        batch.outbox().stream().filter(entry -> !threads.exists(entry.threadId())).forEach(entry -> gone.add(entry.runId()));
        Set<String> rowsOfRuns = new LinkedHashSet<>();
        batch.events().forEach(event -> rowsOfRuns.add(event.runId()));
        batch.inputs().forEach(input -> rowsOfRuns.add(input.runId()));
        batch.reservations().forEach(reservation -> rowsOfRuns.add(reservation.runId()));
        batch.resumePoints().forEach(point -> rowsOfRuns.add(point.runId()));
        batch.leases().forEach(lease -> rowsOfRuns.add(lease.runId()));
        for (String runId : rowsOfRuns) {
            if (!batchRuns.contains(runId) && !runs.exists(runId)) {
                gone.add(runId);
            }
        }
        if (!gone.isEmpty()) {
            throw new ThreadGoneException(gone);
        }
    }

    /** Refuses a batch that makes a run hold a thread another run holds (checked only on such a change). */
    private void checkOneActiveRunPerThread(StoreBatch batch) {
        Map<String, Run> after = new LinkedHashMap<>();
        for (Run run : batch.runs()) {
            after.put(run.id(), run);
        }
        for (Run run : after.values()) {
            Run stored = runs.find(run.id());
            if (!holdsThread(run) || (stored != null && holdsThread(stored))) {
                continue;
            }
            for (Run other : runs.all()) {
                Run otherAfter = after.getOrDefault(other.id(), other);
                if (!other.id().equals(run.id()) && other.threadId().equals(run.threadId()) && holdsThread(otherAfter)) {
                    throw ChatException.conflict("thread " + run.threadId() + " already has an active run");
                }
            }
            for (Run other : after.values()) {
                if (!other.id().equals(run.id()) && !runs.exists(other.id())
                        && other.threadId().equals(run.threadId()) && holdsThread(other)) {
                    throw ChatException.conflict("thread " + run.threadId() + " already has an active run");
                }
            }
        }
    }

    private static boolean holdsThread(Run run) {
        return run.status() == RunStatus.RUNNING || run.status() == RunStatus.WAITING_FOR_INPUT;
    }

    /** Refuses a user message whose client id another user message of its thread has. */
    private void checkClientMessageIds(StoreBatch batch) {
        Map<String, String> taken = new HashMap<>();
        for (Message message : batch.messages()) {
            if (message instanceof UserMessage user && user.clientMessageId() != null) {
                String key = user.threadId() + '\u0000' + user.clientMessageId();
                String other = taken.putIfAbsent(key, user.id());
                Optional<UserMessage> stored = messages.findUserByClientId(user.threadId(), user.clientMessageId());
                if ((other != null && !other.equals(user.id()))
                        || stored.isPresent() && !stored.get().id().equals(user.id())) {
                    throw ChatException.conflict("thread " + user.threadId() + " already has a message with client id "
                            + user.clientMessageId());
                }
            }
        }
    }
}
