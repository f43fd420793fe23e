package dev.parley.chat.store.jdbi;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.attachment.Attachment;
import dev.parley.chat.attachment.AttachmentStore;
import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Feedback;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.outbox.OutboxEntry;
import dev.parley.chat.outbox.OutboxStore;
import dev.parley.chat.store.AnswerOutcome;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.HostActionRecord;
import dev.parley.chat.store.SearchQuery;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadGoneException;
import dev.parley.chat.store.ThreadCursor;
import dev.parley.chat.store.ThreadSearchHit;
import dev.parley.chat.store.jdbi.internal.BatchWrite;
import dev.parley.chat.store.jdbi.internal.Dialect;
import dev.parley.chat.store.jdbi.internal.EventRows;
import dev.parley.chat.store.jdbi.internal.ForeignKeyViolations;
import dev.parley.chat.store.jdbi.internal.MessageDao;
import dev.parley.chat.store.jdbi.internal.SchemaDao;
import dev.parley.chat.store.jdbi.internal.SqliteFiles;
import dev.parley.chat.store.jdbi.internal.StoreDatabase;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * The durable {@link ChatStore}: threads, messages, runs, the run event log, pending inputs, feedback,
 * host-action executions and attachments in SQL tables ({@code parley_*}), on a SQLite file or on PostgreSQL.
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
 * <h2>Trees and search</h2>
 * A branch page is a recursive walk of {@code limit} parent links; its cursor is checked in O(log depth)
 * steps by the depth and jump pointer each message gets on its first save. The search reads SQLite's FTS5
 * indexes (kept by triggers) or PostgreSQL's GIN indexes over vectors the store writes with each row, from
 * {@link SearchQuery}'s quoted terms only. See the module's README for both.
 *
 * <h2>Attachments</h2>
 * As an {@link AttachmentStore}: an owner's uploads with equal bytes share a blob, whose row counts its uses;
 * {@link #deleteThread} takes the thread's uses in its transaction and lists the blobs it frees as
 * unreferenced. Their bytes are kept by a {@link dev.parley.chat.attachment.BlobStore}: by default
 * {@link #blobStore()}, in chunks in this database.
 *
 * <h2>Outbox</h2>
 * As an {@link OutboxStore}: the entries of a batch go into {@code parley_outbox} in its transaction; a claim is
 * a conditional update of {@code claimed_by} and {@code lease_until}, so instances sharing the database never
 * hold one entry at once; a thread's delete removes its entries with it (foreign key cascade).
 *
 * <h2>Contract</h2>
 * Thread-safe. Every failure of the database is a {@link ChatException} with {@link ErrorCode#STORE_FAILURE}
 * and the driver's exception as its cause; messages name the operation and the database, never connection
 * details or secrets. {@link #createThread} throws {@code CONFLICT} for an existing id; {@link #write} throws
 * {@code CONFLICT} for a batch that would give a thread a second RUNNING or WAITING_FOR_INPUT run, or a second
 * user message with one client id (unique indexes, so also across instances), and {@link dev.parley.chat.store.LeaseLostException} for a fenced batch
 * whose run another instance holds. Nothing returned is null unless the {@link ChatStore} contract says so.
 *
 * <p>The store owns its transactions whatever the data source's auto-commit default: it switches each
 * connection it takes to auto-commit and back before giving it back, and never joins a host transaction.
 */
public final class JdbiChatStore implements ChatStore, AttachmentStore, OutboxStore {
    private final StoreDatabase db;
    private final BatchWrite batchWrite;
    private final JdbiBlobStore blobs;

    private JdbiChatStore(StoreDatabase db) {
        this.db = db;
        this.batchWrite = new BatchWrite(db);
        this.blobs = new JdbiBlobStore(db);
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
        if (db.write("creating a thread", dao -> dao.threads().insert(thread)) == 0) {
            throw ChatException.conflict("thread exists: " + thread.id());
        }
    }

    @Override
    public Optional<ChatThread> findThread(String threadId) {
        return db.read("reading a thread", dao -> dao.threads().find(threadId));
    }

    @Override
    public List<ChatThread> listThreads(String ownerId, @Nullable ThreadCursor after, int limit) {
        return limit <= 0 ? List.of() : db.read("listing threads", dao -> dao.threads().list(ownerId, after, limit));
    }

    @Override
    public boolean updateThread(ChatThread thread) {
        return db.write("updating a thread", dao -> dao.threads().update(thread)) > 0;
    }

    /**
     * Deletes the thread's row; the foreign keys' cascades delete every row of it in the same statement
     * (migration V7), and SQLite's triggers its search index entries. On SQLite the deleted content is
     * overwritten with zeros ({@code secure_delete}) and the write-ahead log, which still holds the pages
     * as they were, is checkpointed and truncated, so the file keeps no copy (see the README, "Erasure").
     * On PostgreSQL the deleted rows stay in the table files until a VACUUM: {@link #reclaimErasedSpace}.
     *
     * <p>A batch of the thread's run racing the delete either commits first (its rows go with the thread)
     * or fails after it with {@link ThreadGoneException}; on PostgreSQL the batch locks each thread's row
     * before its runs' and messages' rows, in the order the delete takes them, so the two never deadlock.
     *
     * <p>Before the cascade removes the thread's attachments, the delete takes their uses from their blobs;
     * a blob left with none moves to the {@link #unreferencedBlobs unreferenced} ones, in the same transaction
     * (its bytes stay in the blob store until the engine deletes them). A {@link #saveAttachment} racing the
     * delete either commits first (and its use is taken) or finds the thread gone.
     */
    @Override
    public boolean deleteThread(String threadId) {
        boolean deleted = db.write("deleting a thread", dao -> {
            List<String> freed = dao.attachments().releaseBlobsOf(threadId);
            boolean gone = dao.threads().delete(threadId) > 0;
            dao.attachments().free(freed, System.currentTimeMillis());
            return gone;
        });
        if (deleted) {
            db.dialect().afterErase(db);
        }
        return deleted;
    }

    /**
     * Removes what erased rows leave in the database's files, for the tables that hold a person's data:
     * call it after erasing (e.g. a nightly job after {@code ChatEngine.eraseOwner} calls). Blocks until done.
     *
     * <ul>
     *   <li>PostgreSQL, {@link Reclaim#VACUUM}: {@code VACUUM} of the Parley tables. Reads and writes go on
     *       meanwhile. Afterwards no row version of an erased thread is left for any query, index scan or
     *       dump to find, but the bytes of the removed rows may stay in the free space of their pages (and of
     *       GIN index pages) until new rows overwrite them.</li>
     *   <li>PostgreSQL, {@link Reclaim#REWRITE}: {@code VACUUM FULL}: each table and its indexes are written
     *       anew into new files and the old files are removed, so the table files keep no byte of erased
     *       rows. It takes an exclusive lock on each table while it rewrites it: no read or write of the chat
     *       goes on meanwhile. Copies outside the table files (PostgreSQL's write-ahead log until it is
     *       recycled, archives, backups) are the operator's to handle.</li>
     *   <li>SQLite, either: {@code VACUUM} and a truncating checkpoint of the write-ahead log. A store that
     *       deleted with version 7 of the schema has left nothing to reclaim (deletes overwrite with zeros);
     *       this removes what deletes of earlier versions left in free pages. Writes wait meanwhile.</li>
     * </ul>
     *
     * @throws ChatException STORE_FAILURE if the database failed
     */
    public void reclaimErasedSpace(Reclaim how) {
        Objects.requireNonNull(how, "how");
        db.dialect().reclaimErasedSpace(db, how == Reclaim.REWRITE);
    }

    /** How far {@link #reclaimErasedSpace} goes on PostgreSQL (SQLite always rewrites its file). */
    public enum Reclaim {
        /** Plain {@code VACUUM}: the dead rows go, online; their bytes may stay in free space of pages. */
        VACUUM,
        /** {@code VACUUM FULL}: the tables are rewritten into new files; exclusive locks meanwhile. */
        REWRITE
    }

    // ------------------------------------------------------------------ the batched write

    @Override
    public void write(StoreBatch batch) {
        batchWrite.write(batch);
    }

    // ------------------------------------------------------------------ messages

    @Override
    public Optional<Message> findMessage(String messageId) {
        return db.read("reading a message", dao -> dao.messages().findBody(messageId)).map(MessageDao::decode);
    }

    @Override
    public List<Message> listTopLevelMessages(String threadId, @Nullable String beforeMessageId, int limit) {
        return limit <= 0 ? List.of() : MessageDao.decodeAll(db.read("reading a page of messages",
                dao -> dao.messages().topLevelPage(threadId, beforeMessageId, limit)));
    }

    @Override
    public List<Message> listNewestStepMessages(Collection<String> runIds, int limitPerRun) {
        return runIds.isEmpty() || limitPerRun <= 0 ? List.of() : MessageDao.decodeAll(db.read(
                "reading the newest steps of runs", dao -> dao.messages().newestStepBodies(runIds, limitPerRun)));
    }

    @Override
    public List<Message> listStepMessagesAfter(String runId, @Nullable String afterStepId, int limit) {
        return limit <= 0 ? List.of() : MessageDao.decodeAll(db.read("reading a page of a run's steps",
                dao -> dao.messages().stepPageAfter(runId, afterStepId, limit)));
    }

    @Override
    public Map<String, Integer> countStepMessages(Collection<String> runIds) {
        return runIds.isEmpty() ? new LinkedHashMap<>() : db.read("counting the steps of runs",
                dao -> dao.messages().countSteps(runIds));
    }

    @Override
    public Map<String, List<String>> findVariantIds(Collection<String> parentMessageIds) {
        return parentMessageIds.isEmpty() ? new LinkedHashMap<>() : db.read("reading answer variants",
                dao -> dao.messages().variantIds(parentMessageIds));
    }

    // ------------------------------------------------------------------ branches

    @Override
    public List<Message> listBranch(String threadId, String leafId, @Nullable String beforeMessageId, int limit) {
        return limit <= 0 ? List.of() : MessageDao.decodeAll(db.read("reading a branch",
                dao -> dao.tree().branch(threadId, leafId, beforeMessageId, limit)));
    }

    @Override
    public List<Message> findMessages(Collection<String> messageIds) {
        return messageIds.isEmpty() ? List.of() : MessageDao.decodeAll(db.read("reading messages",
                dao -> dao.messages().findBodies(messageIds)));
    }

    @Override
    public Map<String, List<String>> findUserSiblingIds(String threadId, Collection<String> userMessageIds) {
        return userMessageIds.isEmpty() ? new LinkedHashMap<>() : db.read("reading a message's edits",
                dao -> dao.tree().userSiblings(threadId, userMessageIds));
    }

    @Override
    public Optional<String> findNewestDescendant(String threadId, String messageId) {
        return db.read("reading a branch's newest message", dao -> dao.tree().newestDescendant(threadId, messageId));
    }

    @Override
    public Optional<UserMessage> findUserMessageByClientId(String threadId, String clientMessageId) {
        return db.read("reading a message by its client id",
                dao -> dao.messages().findByClientId(threadId, clientMessageId))
                .map(MessageDao::decode).map(UserMessage.class::cast);
    }

    @Override
    public List<Message> listTopLevelMessagesAfter(String threadId, @Nullable String afterMessageId, int limit) {
        return limit <= 0 ? List.of() : MessageDao.decodeAll(db.read("reading a page of a whole thread",
                dao -> dao.messages().topLevelPageAfter(threadId, afterMessageId, limit)));
    }

    // ------------------------------------------------------------------ search

    @Override
    public List<ThreadSearchHit> searchThreads(String ownerId, SearchQuery query, int offset, int limit) {
        return limit <= 0 ? List.of() : db.read("searching threads",
                dao -> dao.search().search(ownerId, query, Math.max(0, offset), limit));
    }

    // ------------------------------------------------------------------ runs and events

    @Override
    public Optional<Run> findRun(String runId) {
        return db.read("reading a run", dao -> dao.runs().find(runId));
    }

    @Override
    public List<Run> findRuns(Set<RunStatus> statuses) {
        return statuses.isEmpty() ? List.of()
                : db.read("finding runs by status", dao -> dao.runs().findByStatus(statuses));
    }

    @Override
    public List<Run> findThreadRuns(String threadId, Set<RunStatus> statuses) {
        return statuses.isEmpty() ? List.of()
                : db.read("finding a thread's runs", dao -> dao.runs().findOfThread(threadId, statuses));
    }

    @Override
    public List<RunEvent> readEvents(String runId, long afterSeq, int limit) {
        return limit <= 0 ? List.of() : EventRows.decode(runId, db.read("reading run events",
                dao -> dao.events().readPage(runId, afterSeq, limit)), afterSeq, limit);
    }

    @Override
    public long lastSeq(String runId) {
        return db.read("reading a run's last seq", dao -> dao.events().lastSeq(runId)).orElse(0L);
    }

    @Override
    public void reserveSeq(String runId, long upTo) {
        ForeignKeyViolations.asNotFound(() -> db.write("reserving seqs", dao -> dao.events().reserveSeq(runId, upTo)),
                cause -> new ThreadGoneException(Set.of(runId), cause));
    }

    @Override
    public long reservedSeq(String runId) {
        return db.read("reading a seq reservation", dao -> dao.events().reservedSeq(runId)).orElse(0L);
    }

    @Override
    public Optional<StoreBatch.ResumePoint> findResumePoint(String runId) {
        return db.read("reading a resume point", dao -> dao.events().resumePoint(runId));
    }

    @Override
    public void saveStartContext(String runId, Map<String, String> headers) {
        String json = ChatJson.shared().write(headers);
        db.write("keeping a run's start context", dao -> dao.runs().saveStartContext(runId, json));
    }

    @Override
    public Map<String, String> findStartContext(String runId) {
        List<String> kept = db.read("reading a run's start context", dao -> dao.runs().startContext(runId));
        if (kept.isEmpty()) {
            return Map.of();
        }
        return Map.copyOf(ChatJson.shared().read(kept.get(0),
                new com.fasterxml.jackson.core.type.TypeReference<Map<String, String>>() { }));
    }

    // ------------------------------------------------------------------ retention

    @Override
    public List<Run> findRunsToCompact(Instant endedBefore, int limit) {
        return limit <= 0 ? List.of() : db.read("finding runs to compact",
                dao -> dao.runs().findToCompact(endedBefore, limit));
    }

    /**
     * Marks the run compacted, deletes its events and inserts {@code kept}, in one transaction; an unknown
     * run is left alone.
     *
     * @throws IllegalArgumentException if an event of {@code kept} belongs to another run (nothing is changed)
     */
    @Override
    public void compactRunEvents(String runId, List<RunEvent> kept, Instant at) {
        for (RunEvent event : kept) {
            if (!event.runId().equals(runId)) {
                throw new IllegalArgumentException("event " + event.seq() + " of run " + event.runId()
                        + " is not an event of run " + runId);
            }
        }
        EventRows.Prepared encoded = EventRows.prepare(kept);
        db.write("compacting a run's events", dao -> {
            if (dao.runs().markCompacted(runId, at.toEpochMilli()) == 0) {
                return null;
            }
            dao.events().deleteEventsOfRun(runId);
            if (!encoded.isEmpty()) {
                dao.events().insert(encoded.rowsForAnEmptyLog());
            }
            return null;
        });
    }

    // ------------------------------------------------------------------ pending inputs and approvals

    @Override
    public Optional<PendingInput> findInput(String runId, String inputId) {
        return db.read("reading an input", dao -> dao.inputs().find(runId, inputId));
    }

    @Override
    public List<PendingInput> listPendingInputs(String runId) {
        return db.read("listing pending inputs", dao -> dao.inputs().pending(runId));
    }

    @Override
    public AnswerOutcome answerInput(String runId, String inputId, InputAnswer answer, Instant at) {
        return db.write("answering an input", dao -> dao.inputs().answer(runId, inputId, answer, at));
    }

    @Override
    public void reopenInput(String runId, String inputId) {
        db.write("reopening an input", dao -> dao.inputs().reopen(runId, inputId));
    }

    @Override
    public boolean closeInput(String runId, String inputId, InputState state, Instant at) {
        if (state != InputState.EXPIRED && state != InputState.CANCELLED) {
            throw new IllegalArgumentException("an input is closed EXPIRED or CANCELLED, not " + state);
        }
        int closed = db.write("closing an input", dao -> dao.inputs().close(runId, inputId, state.name(), at.toEpochMilli()));
        return closed == 1;
    }

    @Override
    public void cancelPendingInputs(String runId, Instant at) {
        db.write("cancelling pending inputs", dao -> dao.inputs().cancelPending(runId, at.toEpochMilli()));
    }

    @Override
    public void rememberApproval(String threadId, String toolName, Instant at) {
        ForeignKeyViolations.asNotFound(() -> db.write("remembering an approval",
                dao -> dao.inputs().rememberApproval(threadId, toolName, at.toEpochMilli())),
                cause -> new ChatException(ErrorCode.NOT_FOUND, "thread not found: " + threadId, cause));
    }

    @Override
    public boolean isApprovedForThread(String threadId, String toolName) {
        long approvals = db.read("reading an approval", dao -> dao.inputs().countApprovals(threadId, toolName));
        return approvals > 0;
    }

    // ------------------------------------------------------------------ feedback

    @Override
    public void saveFeedback(Feedback feedback) {
        ForeignKeyViolations.asNotFound(() -> db.write("saving feedback", dao -> dao.feedback().save(feedback)),
                cause -> new ChatException(ErrorCode.NOT_FOUND, "thread not found: " + feedback.threadId(), cause));
    }

    @Override
    public Optional<Feedback> findFeedback(String messageId, String ownerId) {
        return db.read("reading feedback", dao -> dao.feedback().find(messageId, ownerId));
    }

    @Override
    public List<Feedback> listFeedback(Collection<String> messageIds) {
        return messageIds.isEmpty() ? List.of() : db.read("listing feedback", dao -> dao.feedback().list(messageIds));
    }

    // ------------------------------------------------------------------ host actions

    @Override
    public HostActionRecord claimHostAction(String runId, String executionId, String name, String arguments,
            Instant at) {
        return ForeignKeyViolations.asNotFound(() -> db.write("claiming a host action",
                dao -> dao.hostActions().claim(runId, executionId, name, arguments, at)),
                cause -> new ThreadGoneException(Set.of(runId), cause));
    }

    @Override
    public void completeHostAction(String runId, String executionId, String result, boolean error, Instant at) {
        boolean stored = db.write("completing a host action",
                dao -> dao.hostActions().complete(runId, executionId, result, error, at.toEpochMilli()) == 1
                        || dao.hostActions().find(runId, executionId).isPresent());
        if (!stored) {
            throw new ThreadGoneException(Set.of(runId));
        }
    }

    // ------------------------------------------------------------------ attachments

    /**
     * The blob store over this store's database (the default place of attachment bytes): pass it to
     * {@code ChatEngine.builder().blobStore(…)}. It works while this store is open.
     */
    public JdbiBlobStore blobStore() {
        return blobs;
    }

    @Override
    public Attachment saveAttachment(Attachment attachment) {
        return ForeignKeyViolations.asNotFound(() -> db.write("saving an attachment",
                dao -> dao.attachments().save(attachment)),
                cause -> new ChatException(ErrorCode.NOT_FOUND, "thread not found: " + attachment.threadId(), cause));
    }

    @Override
    public Optional<Attachment> findAttachment(String attachmentId) {
        return db.read("reading an attachment", dao -> dao.attachments().find(attachmentId));
    }

    @Override
    public List<Attachment> findAttachments(Collection<String> attachmentIds) {
        return attachmentIds.isEmpty() ? List.of()
                : db.read("reading attachments", dao -> dao.attachments().find(attachmentIds));
    }

    @Override
    public long storedAttachmentBytes(String ownerId) {
        return db.read("summing an owner's attachments", dao -> dao.attachments().storedBytes(ownerId));
    }

    @Override
    public List<String> unreferencedBlobs(int limit) {
        return limit <= 0 ? List.of()
                : db.read("listing unreferenced blobs", dao -> dao.attachments().unreferenced(limit));
    }

    @Override
    public void forgetBlobs(Collection<String> blobKeys) {
        if (!blobKeys.isEmpty()) {
            db.write("forgetting deleted blobs", dao -> dao.attachments().forget(blobKeys));
        }
    }

    // ------------------------------------------------------------------ outbox

    @Override
    public List<OutboxEntry> claimOutbox(String instanceId, Instant now, Instant leaseUntil, int limit) {
        return db.write("claiming outbox entries", dao -> dao.outbox().claim(instanceId, now, leaseUntil, limit));
    }

    @Override
    public boolean completeOutbox(String messageId, String destination, String instanceId) {
        return db.write("completing an outbox entry",
                dao -> dao.outbox().complete(messageId, destination, instanceId)) == 1;
    }

    @Override
    public boolean retryOutbox(String messageId, String destination, String instanceId, int attempts,
            Instant nextAttemptAt) {
        return db.write("rescheduling an outbox entry", dao -> dao.outbox().retry(messageId, destination, instanceId,
                attempts, nextAttemptAt.toEpochMilli())) == 1;
    }

    @Override
    public boolean failOutbox(String messageId, String destination, String instanceId, int attempts, Instant at) {
        return db.write("failing an outbox entry", dao -> dao.outbox().fail(messageId, destination, instanceId,
                attempts, at.toEpochMilli())) == 1;
    }

    @Override
    public OutboxStore.Counts countOutbox() {
        return db.read("counting outbox entries",
                dao -> new OutboxStore.Counts(dao.outbox().countPending(), dao.outbox().countFailed()));
    }

    @Override
    public int purgeFailedOutbox(Instant before) {
        return db.write("purging failed outbox entries", dao -> dao.outbox().purgeFailed(before.toEpochMilli()));
    }

    // ------------------------------------------------------------------ leases

    @Override
    public Set<String> leaseRuns(String instanceId, Collection<String> runIds, Instant until) {
        return runIds.isEmpty() ? Set.of()
                : db.write("renewing run leases", dao -> dao.runs().renewLeases(instanceId, runIds, until));
    }

    @Override
    public boolean takeOverRun(String runId, String instanceId, Instant now, Instant until) {
        return db.write("taking a run over",
                dao -> dao.runs().takeOver(runId, instanceId, now.toEpochMilli(), until.toEpochMilli())) == 1;
    }

    @Override
    public List<Run> findRunsWithExpiredLease(Instant now) {
        return db.read("finding runs whose lease expired", dao -> dao.runs().findWithExpiredLease(now.toEpochMilli()));
    }

    @Override
    public Optional<RunLease> findLease(String runId) {
        return db.read("reading a run lease", dao -> dao.runs().findLease(runId));
    }

    /** Closes the connections the store opened itself (a {@link #sqlite(Path)} store); a host's data source stays open. */
    @Override
    public void close() {
        db.close();
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
         *
         * @throws ChatException CONFIGURATION if {@code value} is negative
         */
        public Builder busyTimeout(Duration value) {
            if (value.isNegative()) {
                throw ChatException.configuration("busyTimeout must not be negative, got " + value);
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
            DataSource source = sqliteFile != null ? SqliteFiles.dataSource(sqliteFile, busyTimeout)
                    : Objects.requireNonNull(dataSource);
            Dialect dialect = Dialect.detect(source);
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
                } else {
                    SchemaDao.require(db, ParleyMigrations.location(dialect.kind()));
                }
                return new JdbiChatStore(db);
            } catch (RuntimeException e) {
                db.close();
                throw e;
            }
        }
    }
}
