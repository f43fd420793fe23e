package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.store.StoreBatch;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The JDBI store's {@code ChatStore.write}: one transaction of touches, runs, messages, events, inputs,
 * leases and seq reservations, each kind sent as one JDBC batch (PostgreSQL: events as one statement over
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

    /** Stores a batch in one transaction (see {@link dev.parley.chat.store.ChatStore#write}). */
    public void write(StoreBatch batch) {
        if (batch.isEmpty()) {
            return;
        }
        EncodedBatch encoded = encode(batch);
        db.write("storing a batch of " + batch.events().size() + " events and " + batch.messages().size()
                + " messages", dao -> {
                    store(dao, batch, encoded);
                    return null;
                });
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
        if (!batch.threadTouches().isEmpty()) {
            dao.threads().touch(batch.threadTouches());
        }
        if (!encoded.runs().isEmpty()) {
            dao.runs().upsert(encoded.runs());
        }
        if (!encoded.messages().isEmpty()) {
            dao.messages().upsert(encoded.messages());
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
        if (!batch.leases().isEmpty()) {
            dao.runs().setLeases(batch.leases());
        }
        if (!batch.reservations().isEmpty()) {
            dao.events().reserveSeqs(batch.reservations());
        }
    }

    /** A batch with its JSON written and its repeats folded, ready before the write lock is taken. */
    private record EncodedBatch(List<Run> runs, List<MessageDao.Encoded> messages, EventRows.Prepared events,
            List<PendingInput> inputs) {
    }

    /**
     * Writes the JSON and folds repeats within the batch the way one-by-one saves would end: a run or
     * message saved twice is stored once, with its last value at its first place; of an event or input
     * given twice the first is kept. (No statement then touches a row twice, whatever batching the driver
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
        return new EncodedBatch(List.copyOf(runs.values()), encodedMessages, encodedEvents,
                List.copyOf(inputs.values()));
    }

    private record InputKey(String runId, String inputId) {
    }
}
