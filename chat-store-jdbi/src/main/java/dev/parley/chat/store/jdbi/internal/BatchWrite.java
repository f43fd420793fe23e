package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.store.BranchMovedException;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadGoneException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * The JDBI store's {@code ChatStore.write}: one transaction of touches, runs, messages, events, inputs,
 * leases, seq reservations, resume points and outbox entries, each kind sent as one JDBC batch (PostgreSQL: events as one statement over
 * arrays), so a flush of hundreds of events costs a handful of round trips; a run's consecutive deltas
 * become one row ({@link EventRows}). What a row needs besides its
 * values — JSON, a message's searchable text and (PostgreSQL) its search vector — is made before the
 * transaction starts. The one place that composes
 * the DAOs into a batch; what each statement does is theirs. Thread-safe.
 */
public final class BatchWrite {
    private final StoreDatabase db;
    private final ChatJson json = ChatJson.shared();

    public BatchWrite(StoreDatabase db) {
        this.db = db;
    }

    /**
     * Stores a batch in one transaction (see {@link dev.parley.chat.store.ChatStore#write}).
     *
     * <p>A row of a thread or run that does not exist fails its statement on a foreign key (a lease, and on
     * PostgreSQL a run or message, which is written from its thread's locked row: by its count of 0), and
     * the transaction rolls back. Only then does a read of their own find which
     * of the batch's runs are gone, for the {@link ThreadGoneException}: a batch that stores costs no query
     * more.
     *
     * @throws ThreadGoneException if a row of the batch belongs to a thread or run that does not exist
     */
    public void write(StoreBatch batch) {
        if (batch.isEmpty()) {
            return;
        }
        EncodedBatch encoded = encode(batch);
        try {
            db.write("storing a batch of " + batch.events().size() + " events and " + batch.messages().size()
                    + " messages", dao -> {
                        store(dao, batch, encoded);
                        return null;
                    });
        } catch (ThreadGoneException e) {
            throw goneRuns(batch, e.runIds(), e);
        } catch (ChatException e) {
            if (ForeignKeyViolations.any(e)) {
                throw goneRuns(batch, Set.of(), e);
            }
            throw e;
        }
    }

    /**
     * After a batch failed on a missing thread or run: which of its runs are gone, read anew. If none is (the
     * thread came back with its id meanwhile), the failure is reported as it is.
     */
    private ChatException goneRuns(StoreBatch batch, Set<String> known, ChatException failure) {
        Set<String> threadIds = new LinkedHashSet<>();
        batch.runs().forEach(run -> threadIds.add(run.threadId()));
        batch.messages().forEach(message -> threadIds.add(message.threadId()));
        batch.outbox().forEach(entry -> threadIds.add(entry.threadId()));
        Set<String> rowsOfRuns = new LinkedHashSet<>();
        batch.events().forEach(event -> rowsOfRuns.add(event.runId()));
        batch.inputs().forEach(input -> rowsOfRuns.add(input.runId()));
        batch.reservations().forEach(reservation -> rowsOfRuns.add(reservation.runId()));
        batch.resumePoints().forEach(point -> rowsOfRuns.add(point.runId()));
        batch.leases().forEach(lease -> rowsOfRuns.add(lease.runId()));
        Set<String> existingThreads = threadIds.isEmpty() ? Set.of()
                : db.read("finding the threads of a refused batch", dao -> dao.threads().existingIds(threadIds));
        Set<String> storedRuns = rowsOfRuns.isEmpty() ? Set.of()
                : db.read("finding the runs of a refused batch", dao -> dao.runs().storedIds(rowsOfRuns));
        Set<String> gone = new LinkedHashSet<>(known);
        Set<String> comingRuns = new HashSet<>();
        for (Run run : batch.runs()) {
            if (existingThreads.contains(run.threadId())) {
                comingRuns.add(run.id());
            } else {
                gone.add(run.id());
            }
        }
        for (Message message : batch.messages()) {
            if (!existingThreads.contains(message.threadId())) {
                gone.add(message.runId());
            }
        }
        batch.outbox().stream().filter(entry -> !existingThreads.contains(entry.threadId()))
                .forEach(entry -> gone.add(entry.runId()));
        for (String runId : rowsOfRuns) {
            if (!storedRuns.contains(runId) && !comingRuns.contains(runId)) {
                gone.add(runId);
            }
        }
        if (gone.isEmpty()) {
            return failure;
        }
        return new ThreadGoneException(gone, failure);
    }

    /**
     * The batch's statements, in this order: the fence check first, before anything is written (see
     * {@link RunDao#checkFence}); a kind the batch does not hold sends nothing.
     */
    private static void store(Daos dao, StoreBatch batch, EncodedBatch encoded) {
        String fence = batch.fence();
        if (fence != null) {
            dao.runs().checkFence(fence, batch.writtenRunIds());
        }
        StoreBatch.ExpectedLeaf expected = batch.expectedLeaf();
        if (expected != null) {
            Optional<String> leaf = dao.threads().activeLeafForUpdate(expected.threadId());
            String actual = leaf.filter(id -> !id.isEmpty()).orElse(null);
            if (leaf.isPresent() && !Objects.equals(actual, expected.leafId())) {
                throw new BranchMovedException(expected.threadId(), expected.leafId(), actual);
            }
        }
        if (!batch.threadTouches().isEmpty()) {
            dao.threads().touch(batch.threadTouches());
        }
        Set<String> threadGone = new LinkedHashSet<>();
        if (!encoded.runs().isEmpty()) {
            threadGone.addAll(dao.runs().upsert(encoded.runs()));
        }
        if (!encoded.messages().isEmpty()) {
            threadGone.addAll(dao.messages().upsert(encoded.messages()));
        }
        if (!threadGone.isEmpty()) {
            throw new ThreadGoneException(threadGone);
        }
        if (!encoded.events().isEmpty()) {
            List<EventRows.Row> rows = encoded.events().rows(dao.events());
            if (!rows.isEmpty()) {
                dao.events().insert(rows);
            }
        }
        if (!encoded.inputs().isEmpty()) {
            dao.inputs().insert(encoded.inputs());
        }
        for (Run run : batch.runs()) {
            if (run.status().isTerminal()) {
                // an ended run waits for no input: its inputs still pending end with it, in the same transaction
                dao.inputs().cancelPending(run.id(), (run.finishedAt() != null ? run.finishedAt() : run.createdAt())
                        .toEpochMilli());
            }
        }
        if (!batch.leases().isEmpty()) {
            setLeases(dao, batch.leases());
        }
        if (!batch.reservations().isEmpty()) {
            dao.events().reserveSeqs(batch.reservations());
        }
        if (!encoded.resumePoints().isEmpty()) {
            dao.events().saveResumePoints(encoded.resumePoints());
        }
        if (!batch.outbox().isEmpty()) {
            // last: an entry's thread is checked by its foreign key, as a run's or a message's
            dao.outbox().insert(batch.outbox());
        }
    }

    /** Sets the leases; a lease of a run that is not stored (its thread deleted) fails the batch. */
    private static void setLeases(Daos dao, List<RunLease> leases) {
        int[] counts = dao.runs().setLeases(leases);
        Set<String> missing = new LinkedHashSet<>();
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] == 0) {
                missing.add(leases.get(i).runId());
            }
        }
        if (!missing.isEmpty()) {
            throw new ThreadGoneException(missing);
        }
    }

    /** A batch with its JSON written and its repeats folded, ready before the write lock is taken. */
    private record EncodedBatch(List<Run> runs, List<MessageDao.Encoded> messages, EventRows.Prepared events,
            List<PendingInput> inputs, List<StoreBatch.ResumePoint> resumePoints) {
    }

    /**
     * Writes the JSON and folds repeats within the batch the way one-by-one saves would end: a run or
     * message saved twice is stored once, with its last value at its first place; of an event or input
     * given twice the first is kept; of a run's resume points, the last. (No statement then touches a row twice, whatever batching the driver
     * does, e.g. PostgreSQL's {@code reWriteBatchedInserts}.)
     */
    private EncodedBatch encode(StoreBatch batch) {
        Map<String, Run> runs = new LinkedHashMap<>();
        for (Run run : batch.runs()) {
            runs.put(run.id(), run);
        }
        Map<String, Message> messages = new LinkedHashMap<>();
        for (Message message : batch.messages()) {
            messages.put(message.id(), message);
        }
        boolean vectors = db.dialect().buildsSearchVectors();
        List<MessageDao.Encoded> encodedMessages = new ArrayList<>(messages.size());
        for (Message message : messages.values()) {
            String text = SearchText.of(message);
            encodedMessages.add(new MessageDao.Encoded(message, json.write(message), text,
                    vectors ? SearchText.vector(text) : null));
        }
        EventRows.Prepared encodedEvents = EventRows.prepare(batch.events());
        Map<InputKey, PendingInput> inputs = new LinkedHashMap<>();
        for (PendingInput input : batch.inputs()) {
            inputs.putIfAbsent(new InputKey(input.runId(), input.inputId()), input);
        }
        Map<String, StoreBatch.ResumePoint> points = new LinkedHashMap<>();
        for (StoreBatch.ResumePoint point : batch.resumePoints()) {
            points.put(point.runId(), point);
        }
        return new EncodedBatch(List.copyOf(runs.values()), encodedMessages, encodedEvents,
                List.copyOf(inputs.values()), List.copyOf(points.values()));
    }

    private record InputKey(String runId, String inputId) {
    }
}
