package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.ErrorInfo;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.TokenUsage;
import dev.parley.chat.store.LeaseLostException;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadTouch;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.statement.PreparedBatch;
import org.jspecify.annotations.Nullable;

/**
 * The JDBI store's {@code ChatStore.write}: one transaction of touches, runs, messages, events, inputs,
 * leases and seq reservations, each kind sent as one JDBC batch (PostgreSQL: events as one statement over
 * arrays), so a flush of hundreds of events costs a handful of round trips. Thread-safe.
 */
public final class BatchWrite {
    /** How many run ids one fence check binds at most; a batch of more runs is checked in chunks. */
    private static final int MAX_IN_LIST = 500;
    /** Events per array insert: bounds one statement's size when the writer catches up a long backlog. */
    private static final int EVENTS_PER_STATEMENT = 4096;

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
                + " messages", h -> {
                    String fence = batch.fence();
                    if (fence != null) {
                        checkFence(h, fence, batch.writtenRunIds());
                    }
                    touch(h, batch.threadTouches());
                    upsertRuns(h, encoded.runs());
                    upsertMessages(h, encoded.messages());
                    insertEvents(h, encoded.events());
                    insertInputs(h, encoded.inputs());
                    setLeases(h, batch.leases());
                    reserveSeqs(h, batch.reservations());
                    return null;
                });
    }

    /**
     * Refuses a fenced batch, before anything of it is written, if an instance other than {@code fence}
     * holds the lease of a run it writes; runs not stored yet and runs without a lease owner pass. The check
     * keeps those runs from being taken over until the batch commits (see {@link Dialect#fenceQuery()}).
     * The ids go in sorted, so that batches lock shared runs in one order.
     */
    private void checkFence(Handle h, String fence, Set<String> runIds) {
        List<String> sorted = new ArrayList<>(runIds);
        Collections.sort(sorted);
        Set<String> leasedElsewhere = new HashSet<>();
        for (int from = 0; from < sorted.size(); from += MAX_IN_LIST) {
            h.createQuery(db.dialect().fenceQuery())
                    .bindList("runIds", sorted.subList(from, Math.min(sorted.size(), from + MAX_IN_LIST)))
                    .bind("fence", fence)
                    .map((rs, ctx) -> new RunLeaseOwner(rs.getString("id"), rs.getString("lease_owner")))
                    .forEach(run -> {
                        if (run.owner() != null && !run.owner().equals(fence)) {
                            leasedElsewhere.add(run.id());
                        }
                    });
        }
        if (!leasedElsewhere.isEmpty()) {
            Set<String> lost = new LinkedHashSet<>(runIds);
            lost.retainAll(leasedElsewhere);
            throw new LeaseLostException(lost);
        }
    }

    private record RunLeaseOwner(String id, @Nullable String owner) {
    }

    /** A batch with its JSON written and its repeats folded, ready before the write lock is taken. */
    private record EncodedBatch(List<Run> runs, List<EncodedMessage> messages, List<EncodedEvent> events,
            List<EncodedInput> inputs) {
    }

    private record EncodedInput(PendingInput input, String request, @Nullable String answer) {
    }

    private record EncodedMessage(Message message, String body) {
    }

    private record EncodedEvent(RunEvent event, String payload) {
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
        List<EncodedMessage> encodedMessages = new ArrayList<>(messages.size());
        for (Message message : messages.values()) {
            encodedMessages.add(new EncodedMessage(message, json.write(message)));
        }
        Map<EventKey, RunEvent> events = new LinkedHashMap<>();
        for (RunEvent event : batch.events()) {
            events.putIfAbsent(new EventKey(event.runId(), event.seq()), event);
        }
        List<EncodedEvent> encodedEvents = new ArrayList<>(events.size());
        for (RunEvent event : events.values()) {
            encodedEvents.add(new EncodedEvent(event, json.write(event.event())));
        }
        Map<InputKey, PendingInput> inputs = new LinkedHashMap<>();
        for (PendingInput input : batch.inputs()) {
            inputs.putIfAbsent(new InputKey(input.runId(), input.inputId()), input);
        }
        List<EncodedInput> encodedInputs = new ArrayList<>(inputs.size());
        for (PendingInput input : inputs.values()) {
            encodedInputs.add(new EncodedInput(input, json.write(input.request()),
                    input.answer() == null ? null : json.write(input.answer())));
        }
        return new EncodedBatch(List.copyOf(runs.values()), encodedMessages, encodedEvents, encodedInputs);
    }

    private record EventKey(String runId, long seq) {
    }

    private record InputKey(String runId, String inputId) {
    }

    private static void setLeases(Handle h, List<RunLease> leases) {
        if (leases.isEmpty()) {
            return;
        }
        PreparedBatch statement = h.prepareBatch(Sql.SET_LEASE);
        for (RunLease lease : leases) {
            statement.bind("runId", lease.runId())
                    .bind("instanceId", lease.instanceId())
                    .bind("until", lease.until().toEpochMilli())
                    .add();
        }
        statement.execute();
    }

    private static void touch(Handle h, List<ThreadTouch> touches) {
        if (touches.isEmpty()) {
            return;
        }
        PreparedBatch statement = h.prepareBatch(Sql.TOUCH_THREAD);
        for (ThreadTouch touch : touches) {
            statement.bind("id", touch.threadId())
                    .bind("runtimeSessionId", touch.runtimeSessionId())
                    .bind("lastMessageAt", Rows.millis(touch.lastMessageAt()))
                    .bind("defaultTitle", touch.defaultTitle())
                    .add();
        }
        statement.execute();
    }

    /**
     * Upserts the runs, those that hold their thread (RUNNING, WAITING_FOR_INPUT) last, so that a run that
     * ends and the next that starts can share a batch (the index is checked row by row); otherwise in batch
     * order. A run that would be a thread's second active run fails the batch with CONFLICT.
     */
    private void upsertRuns(Handle h, List<Run> runs) {
        if (runs.isEmpty()) {
            return;
        }
        List<Run> ordered = new ArrayList<>(runs);
        ordered.sort(Comparator.comparing(BatchWrite::holdsThread)); // stable: false (leaving or idle) first
        PreparedBatch statement = h.prepareBatch(Sql.UPSERT_RUN);
        for (Run run : ordered) {
            ErrorInfo error = run.error();
            TokenUsage usage = run.usage();
            statement.bind("id", run.id())
                    .bind("threadId", run.threadId())
                    .bind("ownerId", run.ownerId())
                    .bind("status", run.status().name())
                    .bind("userMessageId", run.userMessageId())
                    .bind("assistantMessageId", run.assistantMessageId())
                    .bind("input", run.input())
                    .bind("modelId", run.modelId())
                    .bind("skill", run.skill())
                    .bind("maxIterations", run.maxIterations())
                    .bind("context", json.write(run.context()))
                    .bind("createdAt", run.createdAt().toEpochMilli())
                    .bind("startedAt", Rows.millis(run.startedAt()))
                    .bind("finishedAt", Rows.millis(run.finishedAt()))
                    .bind("errorCode", error == null ? null : error.code())
                    .bind("errorMessage", error == null ? null : error.message())
                    .bind("inputTokens", usage == null ? null : usage.inputTokens())
                    .bind("outputTokens", usage == null ? null : usage.outputTokens())
                    .bind("totalTokens", usage == null ? null : usage.totalTokens())
                    .bind("guardrailsFailureReason", run.guardrailsFailureReason())
                    .add();
        }
        try {
            statement.execute();
        } catch (JdbiException e) {
            if (db.dialect().violatesOneActiveRun(e)) {
                throw oneActiveRunConflict(ordered, e);
            }
            throw e;
        }
    }

    private static boolean holdsThread(Run run) {
        return run.status() == RunStatus.RUNNING || run.status() == RunStatus.WAITING_FOR_INPUT;
    }

    /** CONFLICT naming the thread (the database does not say which of the batch's threads it was). */
    private static ChatException oneActiveRunConflict(List<Run> runs, JdbiException cause) {
        Set<String> threads = new LinkedHashSet<>();
        for (Run run : runs) {
            if (holdsThread(run)) {
                threads.add(run.threadId());
            }
        }
        String message = threads.size() == 1
                ? "thread " + threads.iterator().next() + " already has an active run"
                : "one of the threads " + threads + " already has an active run";
        return new ChatException(ErrorCode.CONFLICT, message, cause);
    }

    private static void upsertMessages(Handle h, List<EncodedMessage> messages) {
        if (messages.isEmpty()) {
            return;
        }
        PreparedBatch statement = h.prepareBatch(Sql.UPSERT_MESSAGE);
        for (EncodedMessage encoded : messages) {
            Message message = encoded.message();
            statement.bind("id", message.id())
                    .bind("threadId", message.threadId())
                    .bind("runId", message.runId())
                    .bind("parentMessageId", message.parentMessageId())
                    .bind("kind", message.kind().wireName())
                    .bind("topLevel", message.kind().isTopLevel())
                    .bind("status", message.status().name())
                    .bind("createdAt", message.createdAt().toEpochMilli())
                    .bind("body", encoded.body())
                    .add();
        }
        statement.execute();
    }

    private void insertEvents(Handle h, List<EncodedEvent> events) {
        if (events.isEmpty()) {
            return;
        }
        Dialect dialect = db.dialect();
        if (dialect.insertsEventsAsArrays()) {
            for (int from = 0; from < events.size(); from += EVENTS_PER_STATEMENT) {
                insertEventArrays(h, dialect, events.subList(from, Math.min(events.size(), from + EVENTS_PER_STATEMENT)));
            }
            return;
        }
        PreparedBatch statement = h.prepareBatch(Sql.INSERT_EVENT);
        for (EncodedEvent encoded : events) {
            RunEvent event = encoded.event();
            statement.bind("runId", event.runId())
                    .bind("seq", event.seq())
                    .bind("createdAt", event.timestamp())
                    .bind("type", event.type())
                    .bind("payload", encoded.payload())
                    .add();
        }
        statement.execute();
    }

    private static void insertEventArrays(Handle h, Dialect dialect, List<EncodedEvent> events) {
        int n = events.size();
        String[] runIds = new String[n];
        Long[] seqs = new Long[n];
        Long[] createdAts = new Long[n];
        String[] types = new String[n];
        String[] payloads = new String[n];
        for (int i = 0; i < n; i++) {
            RunEvent event = events.get(i).event();
            runIds[i] = dialect.storableText(event.runId());
            seqs[i] = event.seq();
            createdAts[i] = event.timestamp();
            types[i] = dialect.storableText(event.type());
            payloads[i] = events.get(i).payload();
        }
        h.createUpdate(Sql.INSERT_EVENTS_UNNEST)
                .bindArray("runIds", String.class, (Object[]) runIds)
                .bindArray("seqs", Long.class, (Object[]) seqs)
                .bindArray("createdAts", Long.class, (Object[]) createdAts)
                .bindArray("types", String.class, (Object[]) types)
                .bindArray("payloads", String.class, (Object[]) payloads)
                .execute();
    }

    private static void insertInputs(Handle h, List<EncodedInput> inputs) {
        if (inputs.isEmpty()) {
            return;
        }
        PreparedBatch statement = h.prepareBatch(Sql.INSERT_INPUT);
        for (EncodedInput encoded : inputs) {
            PendingInput input = encoded.input();
            statement.bind("runId", input.runId())
                    .bind("inputId", input.inputId())
                    .bind("messageId", input.messageId())
                    .bind("kind", input.kind().wireName())
                    .bind("request", encoded.request())
                    .bind("deadline", Rows.millis(input.deadline()))
                    .bind("resumeToken", input.resumeToken())
                    .bind("state", input.state().name())
                    .bind("answer", encoded.answer())
                    .bind("createdAt", input.createdAt().toEpochMilli())
                    .bind("resolvedAt", Rows.millis(input.resolvedAt()))
                    .add();
        }
        statement.execute();
    }

    /** Raises seq reservations, on the caller's transaction. */
    public static void reserveSeqs(Handle h, List<StoreBatch.SeqReservation> reservations) {
        for (StoreBatch.SeqReservation reservation : reservations) {
            h.createUpdate(Sql.RESERVE_SEQ)
                    .bind("runId", reservation.runId())
                    .bind("upTo", reservation.upTo())
                    .execute();
        }
    }
}
