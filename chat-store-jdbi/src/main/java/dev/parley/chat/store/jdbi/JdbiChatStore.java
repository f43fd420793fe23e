package dev.parley.chat.store.jdbi;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Feedback;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.store.AnswerOutcome;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.HostActionRecord;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadCursor;
import dev.parley.chat.store.jdbi.internal.BatchWrite;
import dev.parley.chat.store.jdbi.internal.Dialect;
import dev.parley.chat.store.jdbi.internal.Rows;
import dev.parley.chat.store.jdbi.internal.Sql;
import dev.parley.chat.store.jdbi.internal.SqliteFiles;
import dev.parley.chat.store.jdbi.internal.StoreDatabase;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.statement.Query;
import org.jspecify.annotations.Nullable;

/**
 * The durable {@link ChatStore}: threads, messages, runs, the run event log, pending inputs, feedback and
 * host-action executions in SQL tables ({@code parley_*}), on a SQLite file or on PostgreSQL.
 *
 * <p>Build one with {@link #sqlite(Path)} (a file the store owns: WAL mode, busy timeout, a kept-open writer
 * connection) or {@link #builder(DataSource)} (the host's data source, typically a pool; the host keeps
 * owning it). The database is detected from the driver; its tables are created or upgraded by Flyway at
 * start-up (its own history table {@value ParleyMigrations#HISTORY_TABLE}), unless the host runs the
 * migrations itself ({@link Builder#migrate(boolean)}, {@link ParleyMigrations}).
 *
 * <h2>Writes</h2>
 * {@link #write(StoreBatch)} is one transaction: touches, runs, messages, events and inputs, each kind
 * sent as one JDBC batch, so a flush of hundreds of events costs a handful of round trips. A message keeps
 * the place its first save gave it ({@code save_order}); events and inputs that exist are left as they
 * are. On SQLite, which takes one writer per file, the store serialises its own writes; reads never wait
 * for them (WAL). Answers to inputs and host-action claims are single conditional statements, so concurrent
 * callers — threads or host instances — get exactly one winner.
 *
 * <h2>Contract</h2>
 * Thread-safe. Every failure of the database is a {@link ChatException} with {@link ErrorCode#STORE_FAILURE}
 * and the driver's exception as its cause; messages name the operation and the database, never connection
 * details or secrets. {@link #createThread} throws {@code CONFLICT} for an existing id; {@link #write} throws
 * {@code CONFLICT} for a batch that would give a thread a second RUNNING or WAITING_FOR_INPUT run (a unique
 * index, so also across instances) and {@link dev.parley.chat.store.LeaseLostException} for a fenced batch
 * whose run another instance holds. Nothing returned is null unless the {@link ChatStore} contract says so.
 *
 * <p>The store owns its transactions whatever the data source's auto-commit default: it switches each
 * connection it takes to auto-commit and back before giving it back, and never joins a host transaction.
 */
public final class JdbiChatStore implements ChatStore {
    /** How many ids one {@code IN (…)} list binds at most; longer collections are read in chunks. */
    private static final int MAX_IN_LIST = 500;

    private final StoreDatabase db;
    private final BatchWrite batchWrite;
    private final ChatJson json = ChatJson.shared();

    private JdbiChatStore(StoreDatabase db) {
        this.db = db;
        this.batchWrite = new BatchWrite(db);
    }

    /**
     * A store on the host's data source. The data source is not closed by {@link #close()}; a pool should
     * allow a few connections (reads run on their own connections, beside writes).
     */
    public static Builder builder(DataSource dataSource) {
        return new Builder(Objects.requireNonNull(dataSource, "dataSource"), null);
    }

    /**
     * A store on a SQLite file (created with its parent folders if missing) that the store opens and
     * closes itself: WAL mode, {@code synchronous=FULL}, a busy timeout, one writer connection kept open,
     * and a few idle reader connections.
     */
    public static Builder sqlite(Path file) {
        return new Builder(null, Objects.requireNonNull(file, "file"));
    }

    /** The database this store runs on. */
    public DatabaseKind databaseKind() {
        return db.dialect().kind();
    }

    // ------------------------------------------------------------------ threads

    @Override
    public void createThread(ChatThread thread) {
        int inserted = db.write("creating a thread", h -> h.createUpdate(Sql.INSERT_THREAD)
                .bind("id", thread.id())
                .bind("ownerId", thread.ownerId())
                .bind("title", thread.title())
                .bind("runtimeSessionId", thread.runtimeSessionId())
                .bind("modelId", thread.modelId())
                .bind("skill", thread.skill())
                .bind("status", thread.status().name())
                .bind("createdAt", thread.createdAt().toEpochMilli())
                .bind("lastMessageAt", thread.lastMessageAt().toEpochMilli())
                .execute());
        if (inserted == 0) {
            throw ChatException.conflict("thread exists: " + thread.id());
        }
    }

    @Override
    public Optional<ChatThread> findThread(String threadId) {
        return db.read("reading a thread", h -> h.createQuery(Sql.FIND_THREAD)
                .bind("id", threadId)
                .map((rs, ctx) -> Rows.thread(rs))
                .findOne());
    }

    @Override
    public List<ChatThread> listThreads(String ownerId, @Nullable ThreadCursor after, int limit) {
        if (limit <= 0) {
            return List.of();
        }
        return db.read("listing threads", h -> {
            Query query = h.createQuery(after == null ? Sql.LIST_THREADS : Sql.LIST_THREADS_AFTER)
                    .bind("ownerId", ownerId)
                    .bind("limit", limit);
            if (after != null) {
                query.bind("afterAt", after.lastMessageAt().toEpochMilli()).bind("afterId", after.id());
            }
            return query.map((rs, ctx) -> Rows.thread(rs)).list();
        });
    }

    @Override
    public boolean updateThread(ChatThread thread) {
        return db.write("updating a thread", h -> h.createUpdate(Sql.UPDATE_THREAD)
                .bind("id", thread.id())
                .bind("title", thread.title())
                .bind("modelId", thread.modelId())
                .bind("skill", thread.skill())
                .bind("status", thread.status().name())
                .execute()) > 0;
    }

    @Override
    public boolean deleteThread(String threadId) {
        return db.write("deleting a thread", h -> {
            if (h.createUpdate(Sql.DELETE_THREAD).bind("threadId", threadId).execute() == 0) {
                return false;
            }
            for (String sql : Sql.DELETE_THREAD_CONTENT) {
                h.createUpdate(sql).bind("threadId", threadId).execute();
            }
            return true;
        });
    }

    // ------------------------------------------------------------------ the batched write

    @Override
    public void write(StoreBatch batch) {
        batchWrite.write(batch);
    }

    // ------------------------------------------------------------------ messages

    @Override
    public Optional<Message> findMessage(String messageId) {
        return db.read("reading a message", h -> h.createQuery(Sql.FIND_MESSAGE)
                        .bind("id", messageId)
                        .mapTo(String.class)
                        .findOne())
                .map(this::message);
    }

    @Override
    public List<Message> listTopLevelMessages(String threadId, @Nullable String beforeMessageId, int limit) {
        if (limit <= 0) {
            return List.of();
        }
        List<String> newestFirst = db.read("reading a page of messages", h -> (beforeMessageId == null
                        ? h.createQuery(Sql.TOP_LEVEL_NEWEST)
                        : h.createQuery(Sql.TOP_LEVEL_BEFORE).bind("beforeId", beforeMessageId))
                .bind("threadId", threadId)
                .bind("limit", limit)
                .mapTo(String.class)
                .list());
        List<Message> page = new ArrayList<>(newestFirst.size());
        for (int i = newestFirst.size() - 1; i >= 0; i--) {
            page.add(message(newestFirst.get(i)));
        }
        return page;
    }

    @Override
    public List<Message> listStepMessages(Collection<String> runIds) {
        List<OrderedBody> rows = new ArrayList<>();
        List<List<String>> chunks = chunks(runIds);
        for (List<String> chunk : chunks) {
            rows.addAll(db.read("reading step messages", h -> h.createQuery(Sql.STEP_MESSAGES)
                    .bindList("runIds", chunk)
                    .map((rs, ctx) -> new OrderedBody(rs.getLong("save_order"), rs.getString("body")))
                    .list()));
        }
        if (chunks.size() > 1) {
            rows.sort(Comparator.comparingLong(OrderedBody::saveOrder));
        }
        List<Message> steps = new ArrayList<>(rows.size());
        for (OrderedBody row : rows) {
            steps.add(message(row.body()));
        }
        return steps;
    }

    private record OrderedBody(long saveOrder, String body) {
    }

    @Override
    public Map<String, List<String>> findVariantIds(Collection<String> parentMessageIds) {
        Map<String, List<String>> found = new LinkedHashMap<>();
        for (List<String> chunk : chunks(parentMessageIds)) {
            db.read("reading answer variants", h -> {
                h.createQuery(Sql.VARIANT_IDS)
                        .bindList("parentIds", chunk)
                        .map((rs, ctx) -> Map.entry(rs.getString(1), rs.getString(2)))
                        .forEach(row -> found.computeIfAbsent(row.getKey(), k -> new ArrayList<>()).add(row.getValue()));
                return null;
            });
        }
        Map<String, List<String>> result = new LinkedHashMap<>();
        for (String parent : parentMessageIds) {
            List<String> ids = found.get(parent);
            if (ids != null) {
                result.putIfAbsent(parent, List.copyOf(ids));
            }
        }
        return result;
    }

    /** Distinct ids in chunks short enough for one {@code IN (…)} list. */
    private static List<List<String>> chunks(Collection<String> ids) {
        List<String> distinct = new ArrayList<>(new LinkedHashSet<>(ids));
        List<List<String>> chunks = new ArrayList<>();
        for (int from = 0; from < distinct.size(); from += MAX_IN_LIST) {
            chunks.add(distinct.subList(from, Math.min(distinct.size(), from + MAX_IN_LIST)));
        }
        return chunks;
    }

    /** A stored message; one that cannot be read (corrupt, or of a type this version does not know) is a store failure. */
    private Message message(String body) {
        try {
            return json.readMessage(body);
        } catch (ChatException e) {
            throw new ChatException(ErrorCode.STORE_FAILURE, "a stored message cannot be read", e);
        }
    }

    private AgentStreamEvent event(String payload) {
        try {
            return json.readEvent(payload);
        } catch (ChatException e) {
            throw new ChatException(ErrorCode.STORE_FAILURE, "a stored run event cannot be read", e);
        }
    }

    // ------------------------------------------------------------------ runs and events

    @Override
    public Optional<Run> findRun(String runId) {
        return db.read("reading a run", h -> h.createQuery(Sql.FIND_RUN)
                .bind("id", runId)
                .map((rs, ctx) -> Rows.run(rs))
                .findOne());
    }

    @Override
    public List<Run> findRuns(Set<RunStatus> statuses) {
        if (statuses.isEmpty()) {
            return List.of();
        }
        return db.read("finding runs by status", h -> h.createQuery(Sql.FIND_RUNS)
                .bindList("statuses", names(statuses))
                .map((rs, ctx) -> Rows.run(rs))
                .list());
    }

    @Override
    public List<Run> findThreadRuns(String threadId, Set<RunStatus> statuses) {
        if (statuses.isEmpty()) {
            return List.of();
        }
        return db.read("finding a thread's runs", h -> h.createQuery(Sql.FIND_THREAD_RUNS)
                .bind("threadId", threadId)
                .bindList("statuses", names(statuses))
                .map((rs, ctx) -> Rows.run(rs))
                .list());
    }

    private static List<String> names(Set<RunStatus> statuses) {
        List<String> names = new ArrayList<>(statuses.size());
        for (RunStatus status : statuses) {
            names.add(status.name());
        }
        return names;
    }

    @Override
    public List<RunEvent> readEvents(String runId, long afterSeq, int limit) {
        if (limit <= 0) {
            return List.of();
        }
        List<StoredEvent> rows = db.read("reading run events", h -> h.createQuery(Sql.READ_EVENTS)
                .bind("runId", runId)
                .bind("afterSeq", afterSeq)
                .bind("limit", limit)
                .map((rs, ctx) -> new StoredEvent(rs.getLong("seq"), rs.getLong("created_at"), rs.getString("payload")))
                .list());
        List<RunEvent> events = new ArrayList<>(rows.size());
        for (StoredEvent row : rows) {
            events.add(new RunEvent(runId, row.seq(), row.createdAt(), event(row.payload())));
        }
        return events;
    }

    private record StoredEvent(long seq, long createdAt, String payload) {
    }

    @Override
    public long lastSeq(String runId) {
        return db.read("reading a run's last seq", h -> h.createQuery(Sql.LAST_SEQ)
                .bind("runId", runId)
                .mapTo(Long.class)
                .findOne()
                .orElse(0L));
    }

    @Override
    public void reserveSeq(String runId, long upTo) {
        db.write("reserving seqs", h -> {
            BatchWrite.reserveSeqs(h, List.of(new StoreBatch.SeqReservation(runId, upTo)));
            return null;
        });
    }

    @Override
    public long reservedSeq(String runId) {
        return db.read("reading a seq reservation", h -> h.createQuery(Sql.RESERVED_SEQ)
                .bind("runId", runId)
                .mapTo(Long.class)
                .findOne()
                .orElse(0L));
    }

    // ------------------------------------------------------------------ pending inputs

    @Override
    public Optional<PendingInput> findInput(String runId, String inputId) {
        return db.read("reading an input", h -> findInput(h, runId, inputId));
    }

    private static Optional<PendingInput> findInput(Handle h, String runId, String inputId) {
        return h.createQuery(Sql.FIND_INPUT)
                .bind("runId", runId)
                .bind("inputId", inputId)
                .map((rs, ctx) -> Rows.input(rs))
                .findOne();
    }

    @Override
    public List<PendingInput> listPendingInputs(String runId) {
        return db.read("listing pending inputs", h -> h.createQuery(Sql.PENDING_INPUTS)
                .bind("runId", runId)
                .map((rs, ctx) -> Rows.input(rs))
                .list());
    }

    @Override
    public AnswerOutcome answerInput(String runId, String inputId, InputAnswer answer, Instant at) {
        String encoded = json.write(answer);
        return db.write("answering an input", h -> {
            int answered = h.createUpdate(Sql.ANSWER_INPUT)
                    .bind("runId", runId)
                    .bind("inputId", inputId)
                    .bind("answer", encoded)
                    .bind("resolvedAt", at.toEpochMilli())
                    .execute();
            if (answered == 1) {
                return AnswerOutcome.ACCEPTED;
            }
            Optional<PendingInput> stored = findInput(h, runId, inputId);
            if (stored.isEmpty()) {
                return AnswerOutcome.NOT_FOUND;
            }
            PendingInput input = stored.get();
            return input.state() == InputState.ANSWERED && answer.equals(input.answer())
                    ? AnswerOutcome.REPLAYED : AnswerOutcome.CONFLICT;
        });
    }

    @Override
    public void reopenInput(String runId, String inputId) {
        db.write("reopening an input", h -> h.createUpdate(Sql.REOPEN_INPUT)
                .bind("runId", runId)
                .bind("inputId", inputId)
                .execute());
    }

    @Override
    public boolean closeInput(String runId, String inputId, InputState state, Instant at) {
        if (state != InputState.EXPIRED && state != InputState.CANCELLED) {
            throw new IllegalArgumentException("an input is closed EXPIRED or CANCELLED, not " + state);
        }
        return db.write("closing an input", h -> h.createUpdate(Sql.CLOSE_INPUT)
                .bind("runId", runId)
                .bind("inputId", inputId)
                .bind("state", state.name())
                .bind("resolvedAt", at.toEpochMilli())
                .execute()) == 1;
    }

    @Override
    public void cancelPendingInputs(String runId, Instant at) {
        db.write("cancelling pending inputs", h -> h.createUpdate(Sql.CANCEL_PENDING_INPUTS)
                .bind("runId", runId)
                .bind("resolvedAt", at.toEpochMilli())
                .execute());
    }

    @Override
    public void rememberApproval(String threadId, String toolName, Instant at) {
        db.write("remembering an approval", h -> h.createUpdate(Sql.REMEMBER_APPROVAL)
                .bind("threadId", threadId)
                .bind("toolName", toolName)
                .bind("approvedAt", at.toEpochMilli())
                .execute());
    }

    @Override
    public boolean isApprovedForThread(String threadId, String toolName) {
        return db.read("reading an approval", h -> h.createQuery(Sql.IS_APPROVED_FOR_THREAD)
                .bind("threadId", threadId)
                .bind("toolName", toolName)
                .mapTo(Long.class)
                .one()) > 0;
    }

    // ------------------------------------------------------------------ feedback

    @Override
    public void saveFeedback(Feedback feedback) {
        db.write("saving feedback", h -> h.createUpdate(Sql.UPSERT_FEEDBACK)
                .bind("messageId", feedback.messageId())
                .bind("ownerId", feedback.ownerId())
                .bind("threadId", feedback.threadId())
                .bind("runId", feedback.runId())
                .bind("rating", feedback.rating().name())
                .bind("comment", feedback.comment())
                .bind("createdAt", feedback.createdAt().toEpochMilli())
                .execute());
    }

    @Override
    public Optional<Feedback> findFeedback(String messageId, String ownerId) {
        return db.read("reading feedback", h -> h.createQuery(Sql.FIND_FEEDBACK)
                .bind("messageId", messageId)
                .bind("ownerId", ownerId)
                .map((rs, ctx) -> Rows.feedback(rs))
                .findOne());
    }

    // ------------------------------------------------------------------ host actions

    @Override
    public HostActionRecord claimHostAction(String runId, String executionId, String name, String arguments,
            Instant at) {
        return db.write("claiming a host action", h -> {
            int inserted = h.createUpdate(Sql.CLAIM_HOST_ACTION)
                    .bind("runId", runId)
                    .bind("executionId", executionId)
                    .bind("name", name)
                    .bind("arguments", arguments)
                    .bind("claimedAt", at.toEpochMilli())
                    .execute();
            if (inserted == 1) {
                return new HostActionRecord(runId, executionId, name, arguments, true, null, false, at, null);
            }
            return h.createQuery(Sql.FIND_HOST_ACTION)
                    .bind("runId", runId)
                    .bind("executionId", executionId)
                    .map((rs, ctx) -> Rows.existingHostAction(rs))
                    .findOne()
                    .orElseThrow(() -> new ChatException(ErrorCode.STORE_FAILURE,
                            "the host action execution was neither inserted nor found (deleted meanwhile?)"));
        });
    }

    @Override
    public void completeHostAction(String runId, String executionId, String result, boolean error, Instant at) {
        db.write("completing a host action", h -> h.createUpdate(Sql.COMPLETE_HOST_ACTION)
                .bind("runId", runId)
                .bind("executionId", executionId)
                .bind("result", result)
                .bind("error", error)
                .bind("completedAt", at.toEpochMilli())
                .execute());
    }

    // ------------------------------------------------------------------ leases

    @Override
    public Set<String> leaseRuns(String instanceId, Collection<String> runIds, Instant until) {
        if (runIds.isEmpty()) {
            return Set.of();
        }
        List<String> ids = List.copyOf(new java.util.LinkedHashSet<>(runIds));
        return db.write("renewing run leases", h -> {
            h.createUpdate(Sql.RENEW_LEASES)
                    .bind("instanceId", instanceId)
                    .bind("until", until.toEpochMilli())
                    .bindList("runIds", ids)
                    .execute();
            return Set.copyOf(h.createQuery(Sql.HELD_LEASES)
                    .bind("instanceId", instanceId)
                    .bindList("runIds", ids)
                    .mapTo(String.class)
                    .list());
        });
    }

    @Override
    public boolean takeOverRun(String runId, String instanceId, Instant now, Instant until) {
        return db.write("taking a run over", h -> h.createUpdate(Sql.TAKE_OVER_RUN)
                .bind("runId", runId)
                .bind("instanceId", instanceId)
                .bind("now", now.toEpochMilli())
                .bind("until", until.toEpochMilli())
                .execute()) == 1;
    }

    @Override
    public List<Run> findRunsWithExpiredLease(Instant now) {
        return db.read("finding runs whose lease expired", h -> h.createQuery(Sql.FIND_EXPIRED_LEASES)
                .bind("now", now.toEpochMilli())
                .map((rs, ctx) -> Rows.run(rs))
                .list());
    }

    @Override
    public Optional<RunLease> findLease(String runId) {
        return db.read("reading a run lease", h -> h.createQuery(Sql.FIND_LEASE)
                .bind("runId", runId)
                .map((rs, ctx) -> new RunLease(runId, rs.getString("lease_owner"),
                        Instant.ofEpochMilli(rs.getLong("lease_until"))))
                .findOne());
    }

    /** Closes the connections the store opened itself (a {@link #sqlite(Path)} store); a host's data source stays open. */
    @Override
    public void close() {
        db.close();
    }

    // ------------------------------------------------------------------ building

    private void requireSchema() {
        for (String table : Sql.TABLES) {
            try {
                db.read("probing " + table, h -> h.createQuery(Sql.probe(table))
                        .mapTo(Long.class)
                        .one());
            } catch (ChatException e) {
                throw new ChatException(ErrorCode.STORE_FAILURE, "the Parley table " + table + " is missing or "
                        + "unreadable: run the migrations (ParleyMigrations.migrate, or the scripts at "
                        + ParleyMigrations.location(databaseKind()) + ") or build the store with migrate(true)", e);
            }
        }
        String tooOld = "the Parley tables are older than this version: run the newer migrations "
                + "(ParleyMigrations.migrate, or the scripts at " + ParleyMigrations.location(databaseKind())
                + ") or build the store with migrate(true)";
        for (String probe : Sql.LATER_COLUMN_PROBES) {
            try {
                db.read("probing the schema version", h -> h.createQuery(probe).mapToMap().list());
            } catch (ChatException e) {
                throw new ChatException(ErrorCode.STORE_FAILURE, tooOld, e);
            }
        }
        int oneActiveRunIndex = db.read("probing the schema version", h -> h.createQuery(db.dialect().indexExistsQuery())
                .bind("name", Sql.ONE_ACTIVE_RUN_INDEX)
                .mapTo(Integer.class)
                .one());
        if (oneActiveRunIndex == 0) {
            throw new ChatException(ErrorCode.STORE_FAILURE, tooOld + " (the index " + Sql.ONE_ACTIVE_RUN_INDEX
                    + " of version 3 is missing)");
        }
    }

    /**
     * Configures a {@link JdbiChatStore}. Not thread-safe; {@link #build()} once.
     */
    public static final class Builder {
        private final @Nullable DataSource dataSource;
        private final @Nullable Path sqliteFile;
        private boolean migrate = true;
        private Duration busyTimeout = Duration.ofSeconds(5);

        private Builder(@Nullable DataSource dataSource, @Nullable Path sqliteFile) {
            this.dataSource = dataSource;
            this.sqliteFile = sqliteFile;
        }

        /**
         * Whether {@link #build()} creates or upgrades the tables with Flyway (default true). With false the
         * host runs them (see {@link ParleyMigrations}); build then only checks that the tables exist.
         */
        public Builder migrate(boolean value) {
            this.migrate = value;
            return this;
        }

        /**
         * SQLite only: how long a statement waits for another connection's write lock before it fails
         * (default 5 s). The store's own writes never wait for each other on the database: it serialises
         * them; this covers another process, or a host connection, writing the same file.
         */
        public Builder busyTimeout(Duration value) {
            if (value.isNegative()) {
                throw new IllegalArgumentException("busyTimeout must not be negative");
            }
            this.busyTimeout = value;
            return this;
        }

        /**
         * Connects, detects the database, runs the migrations (or checks the tables are there) and returns
         * the store.
         *
         * @throws ChatException STORE_FAILURE if the database cannot be reached, is neither SQLite nor
         *     PostgreSQL, or its migrations fail or are missing
         */
        public JdbiChatStore build() {
            DataSource source = dataSource != null ? dataSource : sqliteDataSource(Objects.requireNonNull(sqliteFile));
            Dialect dialect = detect(source);
            StoreDatabase db = sqliteFile != null
                    ? StoreDatabase.ownedSqlite(source, busyTimeout)
                    : StoreDatabase.over(source, dialect, busyTimeout);
            try {
                db.writeWithoutTransaction("preparing the database", h -> {
                    dialect.initialise(h);
                    return null;
                });
                if (migrate) {
                    ParleyMigrations.migrate(source, dialect);
                }
                JdbiChatStore store = new JdbiChatStore(db);
                if (!migrate) {
                    store.requireSchema();
                }
                return store;
            } catch (RuntimeException e) {
                db.close();
                throw e;
            }
        }

        private DataSource sqliteDataSource(Path file) {
            try {
                Path parent = file.toAbsolutePath().getParent();
                if (parent != null) {
                    Files.createDirectories(parent);
                }
            } catch (IOException e) {
                throw new ChatException(ErrorCode.STORE_FAILURE, "cannot create the folder of the SQLite file", e);
            }
            return SqliteFiles.dataSource(file, busyTimeout);
        }

        static Dialect detect(DataSource source) {
            String product;
            try (Connection connection = source.getConnection()) {
                product = connection.getMetaData().getDatabaseProductName();
            } catch (SQLException | RuntimeException e) {
                throw new ChatException(ErrorCode.STORE_FAILURE, "cannot connect to the database", e);
            }
            return Dialect.detect(product == null ? "" : product);
        }
    }
}
