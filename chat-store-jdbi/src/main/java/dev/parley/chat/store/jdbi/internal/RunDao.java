package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.ErrorInfo;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.TokenUsage;
import dev.parley.chat.store.LeaseLostException;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.SqlStatement;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.sqlobject.config.RegisterRowMapper;
import org.jdbi.v3.sqlobject.customizer.BindList;
import org.jdbi.v3.sqlobject.statement.SqlBatch;
import org.jdbi.v3.sqlobject.statement.SqlQuery;
import org.jdbi.v3.sqlobject.statement.SqlUpdate;
import org.jspecify.annotations.Nullable;

/**
 * The runs ({@code parley_runs}): the upsert and its one-active-run rule (the partial unique index
 * {@value #ONE_ACTIVE_RUN_INDEX}), the reads by id, status and thread, and the leases of a cluster: renewals,
 * take-overs, expiries and the fence check of a batch. The fence check and the reading of a unique violation
 * differ between SQLite ({@link Sqlite}) and PostgreSQL ({@link Postgres}); the store uses its database's
 * interface ({@link #of}). Everything else is shared.
 */
@RegisterRowMapper(RunDao.Mapper.class)
@RegisterRowMapper(RunDao.LeaseMapper.class)
@RegisterRowMapper(RunDao.LeaseHolder.Mapper.class)
public interface RunDao {
    String COLUMNS = "id, thread_id, owner_id, status, user_message_id, "
            + "assistant_message_id, input, model_id, skill, max_iterations, context, created_at, started_at, "
            + "finished_at, error_code, error_message, error_retry_after_seconds, input_tokens, output_tokens, "
            + "total_tokens, guardrails_failure_reason";

    String RUN_VALUES = ":id, :threadId, "
            + ":ownerId, :status, :userMessageId, :assistantMessageId, :input, :modelId, :skill, :maxIterations, "
            + ":context, :createdAt, :startedAt, :finishedAt, :errorCode, :errorMessage, :errorRetryAfterSeconds, "
            + ":inputTokens, :outputTokens, :totalTokens, :guardrailsFailureReason";

    /** What an upsert of a run replaces: all of it but its id and {@code save_order}. */
    String RUN_ON_CONFLICT = "ON CONFLICT (id) DO UPDATE SET thread_id = excluded.thread_id, owner_id = excluded.owner_id, "
            + "status = excluded.status, user_message_id = excluded.user_message_id, "
            + "assistant_message_id = excluded.assistant_message_id, input = excluded.input, "
            + "model_id = excluded.model_id, skill = excluded.skill, max_iterations = excluded.max_iterations, "
            + "context = excluded.context, created_at = excluded.created_at, started_at = excluded.started_at, "
            + "finished_at = excluded.finished_at, error_code = excluded.error_code, "
            + "error_message = excluded.error_message, "
            + "error_retry_after_seconds = excluded.error_retry_after_seconds, input_tokens = excluded.input_tokens, "
            + "output_tokens = excluded.output_tokens, total_tokens = excluded.total_tokens, "
            + "guardrails_failure_reason = excluded.guardrails_failure_reason";

    /** Inserts a run, or replaces all of it but its id and {@code save_order}. */
    String UPSERT_RUN = "INSERT INTO parley_runs (" + COLUMNS + ") VALUES (" + RUN_VALUES + ") " + RUN_ON_CONFLICT;

    String FIND_RUN = "SELECT " + COLUMNS + " FROM parley_runs WHERE id = :id";

    /** Hot at start-up: the runs a new engine recovers. */
    String FIND_RUNS = "SELECT " + COLUMNS + " FROM parley_runs WHERE status IN (<statuses>) ORDER BY save_order";

    /** Hot: is the thread busy? */
    String FIND_THREAD_RUNS = "SELECT " + COLUMNS + " FROM parley_runs "
            + "WHERE thread_id = :threadId AND status IN (<statuses>) ORDER BY save_order";

    /**
     * The partial unique index (migration V3) that keeps a thread to one RUNNING or WAITING_FOR_INPUT run;
     * a batch breaking it fails with a unique violation naming it (SQLite: naming its column).
     */
    String ONE_ACTIVE_RUN_INDEX = "parley_runs_one_active_per_thread";

    /** Sets a run's lease (the run is written earlier in the same transaction). */
    String SET_LEASE = "UPDATE parley_runs SET lease_owner = :instanceId, lease_until = :until WHERE id = :runId";

    /** Renews the leases an instance holds, or takes those nobody holds. */
    String RENEW_LEASES = "UPDATE parley_runs SET lease_owner = :instanceId, lease_until = :until "
            + "WHERE id IN (<runIds>) AND (lease_owner = :instanceId OR lease_owner IS NULL)";

    String HELD_LEASES = "SELECT id FROM parley_runs WHERE id IN (<runIds>) AND lease_owner = :instanceId";

    /** Which of these runs are stored (after a batch failed on a foreign key: which runs are gone?). */
    String STORED_RUN_IDS = "SELECT id FROM parley_runs WHERE id IN (<runIds>)";

    /** Takes an active run over if its lease expired or it has none; the row count says whether it worked. */
    String TAKE_OVER_RUN = "UPDATE parley_runs SET lease_owner = :instanceId, lease_until = :until "
            + "WHERE id = :runId AND status IN ('QUEUED', 'RUNNING', 'WAITING_FOR_INPUT') "
            + "AND (lease_until IS NULL OR lease_until < :now)";

    /** The active runs whose holder stopped renewing (a scan of the few active runs, by the status index). */
    String FIND_EXPIRED_LEASES = "SELECT " + COLUMNS + " FROM parley_runs "
            + "WHERE status IN ('QUEUED', 'RUNNING', 'WAITING_FOR_INPUT') "
            + "AND (lease_until IS NULL OR lease_until < :now) ORDER BY save_order";

    String FIND_LEASE = "SELECT id, lease_owner, lease_until FROM parley_runs "
            + "WHERE id = :runId AND lease_owner IS NOT NULL";

    /**
     * Ended runs whose event log is not compacted yet, oldest end first: a range of the partial index
     * {@code parley_runs_to_compact (finished_at, save_order) WHERE events_compacted_at IS NULL}, which holds only those.
     */
    String FIND_RUNS_TO_COMPACT = "SELECT " + COLUMNS + " FROM parley_runs "
            + "WHERE events_compacted_at IS NULL AND finished_at < :endedBefore AND status IN (<statuses>) "
            + "ORDER BY finished_at, save_order LIMIT :limit";

    String MARK_COMPACTED = "UPDATE parley_runs SET events_compacted_at = :at WHERE id = :runId";

    /** The interface to attach on a database. */
    static Class<? extends RunDao> of(Dialect dialect) {
        return switch (dialect) {
            case SQLITE -> Sqlite.class;
            case POSTGRESQL -> Postgres.class;
        };
    }

    // ------------------------------------------------------------------ runs

    /** Upserts runs (one JDBC batch) in the order given; each count is 0 where the run's thread does not exist. */
    int[] upsertInOrder(List<Run> runs);

    /**
     * Upserts the runs (one JDBC batch; the batch holds each id once), those that hold their thread
     * (RUNNING, WAITING_FOR_INPUT) last, so that a run that ends and the next that starts can share a batch
     * (the index is checked row by row); otherwise in batch order. A run that would be a thread's second
     * active run fails the batch with CONFLICT.
     *
     * @return the ids of the runs not stored because their thread does not exist (PostgreSQL; on SQLite the
     *     foreign key fails the statement instead)
     */
    default Set<String> upsert(List<Run> runs) {
        List<Run> ordered = new ArrayList<>(runs);
        ordered.sort(Comparator.comparing(RunDao::holdsThread)); // stable: false (leaving or idle) first
        int[] counts;
        try {
            counts = upsertInOrder(ordered);
        } catch (JdbiException e) {
            if (brokeOneActiveRun(e)) {
                throw oneActiveRunConflict(ordered, e);
            }
            throw e;
        }
        Set<String> threadGone = new LinkedHashSet<>();
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] == 0) {
                threadGone.add(ordered.get(i).id());
            }
        }
        return threadGone;
    }

    @SqlQuery(FIND_RUN)
    Optional<Run> find(String id);

    @SqlQuery(FIND_RUNS)
    List<Run> findByStatusNames(@BindList List<String> statuses);

    /** The runs in any of these statuses, in save order; none for no status. */
    default List<Run> findByStatus(Set<RunStatus> statuses) {
        return statuses.isEmpty() ? List.of() : findByStatusNames(names(statuses));
    }

    @SqlQuery(FIND_THREAD_RUNS)
    List<Run> findOfThreadByStatusNames(String threadId, @BindList List<String> statuses);

    /** A thread's runs in any of these statuses, in save order; none for no status. */
    default List<Run> findOfThread(String threadId, Set<RunStatus> statuses) {
        return statuses.isEmpty() ? List.of() : findOfThreadByStatusNames(threadId, names(statuses));
    }

    // ------------------------------------------------------------------ compaction

    @SqlQuery(FIND_RUNS_TO_COMPACT)
    List<Run> findToCompactByStatusNames(long endedBefore, @BindList List<String> statuses, int limit);

    /** Runs in a terminal state that ended before {@code endedBefore} and are not compacted, oldest end first. */
    default List<Run> findToCompact(Instant endedBefore, int limit) {
        List<String> terminal = new ArrayList<>();
        for (RunStatus status : RunStatus.values()) {
            if (status.isTerminal()) {
                terminal.add(status.name());
            }
        }
        return findToCompactByStatusNames(endedBefore.toEpochMilli(), terminal, limit);
    }

    /** Marks a run's event log compacted; 0 if there is no such run. */
    @SqlUpdate(MARK_COMPACTED)
    int markCompacted(String runId, long at);

    /** Keeps a run's start context (JSON); no row changes if the run is not stored. */
    @SqlUpdate("UPDATE parley_runs SET start_context = :headers WHERE id = :runId")
    int saveStartContext(String runId, String headers);

    /** The run's start context (JSON), in a list of at most one: none when the run is not stored or kept none. */
    @SqlQuery("SELECT start_context FROM parley_runs WHERE id = :runId AND start_context IS NOT NULL")
    List<String> startContext(String runId);

    // ------------------------------------------------------------------ leases

    /** Sets leases (one JDBC batch). */
    /** Sets the leases (one JDBC batch); each count is 0 where the run is not stored. */
    @SqlBatch(SET_LEASE)
    int[] setLeases(@BindRow(LeaseColumns.class) List<RunLease> leases);

    @SqlQuery(STORED_RUN_IDS)
    List<String> storedIdsOf(@BindList List<String> runIds);

    /** Which of these runs are stored (long id lists are read in chunks). */
    default Set<String> storedIds(Collection<String> runIds) {
        Set<String> stored = new HashSet<>();
        for (List<String> chunk : InLists.chunks(runIds)) {
            stored.addAll(storedIdsOf(chunk));
        }
        return stored;
    }

    @SqlUpdate(RENEW_LEASES)
    void renew(String instanceId, long until, @BindList List<String> runIds);

    @SqlQuery(HELD_LEASES)
    List<String> held(String instanceId, @BindList List<String> runIds);

    /** Renews the instance's leases of these runs, takes those nobody holds; the ids it holds now. */
    default Set<String> renewLeases(String instanceId, Collection<String> runIds, Instant until) {
        List<String> ids = List.copyOf(new LinkedHashSet<>(runIds));
        renew(instanceId, until.toEpochMilli(), ids);
        return Set.copyOf(held(instanceId, ids));
    }

    /** Takes an active run over if nobody holds a live lease of it; 1 if it did. */
    @SqlUpdate(TAKE_OVER_RUN)
    int takeOver(String runId, String instanceId, long now, long until);

    @SqlQuery(FIND_EXPIRED_LEASES)
    List<Run> findWithExpiredLease(long now);

    @SqlQuery(FIND_LEASE)
    Optional<RunLease> findLease(String runId);

    // ------------------------------------------------------------------ the fence of a batch

    /**
     * The fence check, binding {@code <runIds>} and {@code :fence}: rows including every run of the list
     * leased by another instance, keeping another instance from taking a run of the list over until the
     * transaction ends.
     */
    List<LeaseHolder> fence(List<String> runIds, String fence);

    /**
     * Refuses a fenced batch, before anything of it is written, if an instance other than {@code fence}
     * holds the lease of a run it writes; runs not stored yet and runs without a lease owner pass. The check
     * keeps those runs from being taken over until the batch commits. The ids go in sorted, so that batches
     * lock shared runs in one order.
     *
     * @throws LeaseLostException naming the runs another instance holds
     */
    default void checkFence(String fence, Set<String> runIds) {
        List<String> sorted = new ArrayList<>(runIds);
        Collections.sort(sorted);
        Set<String> leasedElsewhere = new HashSet<>();
        for (List<String> chunk : InLists.chunks(sorted)) {
            for (LeaseHolder run : fence(chunk, fence)) {
                if (run.owner() != null && !run.owner().equals(fence)) {
                    leasedElsewhere.add(run.id());
                }
            }
        }
        if (!leasedElsewhere.isEmpty()) {
            Set<String> lost = new LinkedHashSet<>(runIds);
            lost.retainAll(leasedElsewhere);
            throw new LeaseLostException(lost);
        }
    }

    // ------------------------------------------------------------------ the one-active-run rule

    /** True if this failure of one statement of the database is the one-active-run index's unique violation. */
    boolean violatesOneActiveRun(SQLException e);

    /** True if a failed statement broke {@link #ONE_ACTIVE_RUN_INDEX}. */
    default boolean brokeOneActiveRun(Throwable failure) {
        return UniqueViolations.any(failure, this::violatesOneActiveRun);
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

    private static List<String> names(Set<RunStatus> statuses) {
        List<String> names = new ArrayList<>(statuses.size());
        for (RunStatus status : statuses) {
            names.add(status.name());
        }
        return names;
    }

    // ------------------------------------------------------------------ the dialects

    /** SQLite: the fence takes the file's write lock; a unique violation is read from the driver's message. */
    interface Sqlite extends RunDao {
        /**
         * Its runs leased by an instance other than {@code :fence}. Written as an UPDATE that changes nothing
         * (and a batch with such a run is rolled back anyway) so that, like every write transaction of the
         * store, it starts with a write: a deferred transaction takes the file's write lock here and cannot
         * later fail upgrading a stale read snapshot. From then until the commit no other connection can
         * write the file, so no take-over can come between the check and the batch.
         */
        String FENCE_LOST_RUNS = "UPDATE parley_runs SET lease_owner = lease_owner "
                + "WHERE id IN (<runIds>) AND lease_owner <> :fence RETURNING id, lease_owner";

        @Override
        @SqlQuery(FENCE_LOST_RUNS)
        List<LeaseHolder> fence(@BindList List<String> runIds, String fence);

        @Override
        @SqlBatch(UPSERT_RUN)
        int[] upsertInOrder(@BindRow(Columns.class) List<Run> runs);

        /** sqlite-jdbc names the index's column: {@code UNIQUE constraint failed: parley_runs.thread_id}. */
        @Override
        default boolean violatesOneActiveRun(SQLException e) {
            return UniqueViolations.sqlite(e, "parley_runs.thread_id");
        }
    }

    /**
     * PostgreSQL: the fence locks the runs' rows; a unique violation has its SQLSTATE. Every statement of a
     * batch that locks a run's row, or a message's, first locks the row's thread ({@code FOR KEY SHARE}, as
     * the foreign key's own check would): a thread's delete locks the thread's row first and then its
     * runs' and messages', so a batch taking them in the other order could deadlock with it.
     */
    interface Postgres extends RunDao {
        /**
         * The lease owners of its runs (ids in order), their rows locked until the batch commits. A take-over
         * (an UPDATE of the row) then waits for the batch, and a batch waiting for a take-over reads the lease
         * it committed. FOR NO KEY UPDATE rather than FOR SHARE: the batch may update these rows itself (a
         * run's upsert, its lease), and two batches sharing a row's lock and both upgrading it would deadlock;
         * this way the second waits for the first. Each run's thread is locked (the filter, below the row
         * lock) before the run.
         */
        String FENCE_LOCK_RUNS = "SELECT r.id, r.lease_owner FROM parley_runs r WHERE r.id IN (<runIds>) "
                + "AND EXISTS (SELECT 1 FROM parley_threads t WHERE t.id = r.thread_id FOR KEY SHARE) "
                + "ORDER BY r.id FOR NO KEY UPDATE OF r";

        /** The upsert, from the thread's row locked first: no row (count 0) when the thread does not exist. */
        String UPSERT_RUN_AFTER_ITS_THREAD = "INSERT INTO parley_runs (" + COLUMNS + ") SELECT " + RUN_VALUES
                + " FROM (SELECT 1 AS one FROM parley_threads t WHERE t.id = :threadId FOR KEY SHARE) thread "
                + RUN_ON_CONFLICT;

        @Override
        @SqlBatch(UPSERT_RUN_AFTER_ITS_THREAD)
        int[] upsertInOrder(@BindRow(Columns.class) List<Run> runs);

        @Override
        @SqlQuery(FENCE_LOCK_RUNS)
        List<LeaseHolder> fence(@BindList List<String> runIds, String fence);

        @Override
        default boolean violatesOneActiveRun(SQLException e) {
            return UniqueViolations.postgres(e, ONE_ACTIVE_RUN_INDEX);
        }
    }

    // ------------------------------------------------------------------ rows

    /** A run and the instance holding its lease, if any. */
    record LeaseHolder(String id, @Nullable String owner) {
        public static final class Mapper implements RowMapper<LeaseHolder> {
            @Override
            public LeaseHolder map(ResultSet rs, StatementContext ctx) throws SQLException {
                return new LeaseHolder(rs.getString("id"), rs.getString("lease_owner"));
            }
        }
    }

    /** Binds every column of a run. */
    final class Columns implements BindRow.Binder<Run> {
        private static final ChatJson JSON = ChatJson.shared();

        @Override
        public void bind(SqlStatement<?> statement, Run run) {
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
                    .bind("context", JSON.write(run.context()))
                    .bind("createdAt", run.createdAt().toEpochMilli())
                    .bind("startedAt", Rows.millis(run.startedAt()))
                    .bind("finishedAt", Rows.millis(run.finishedAt()))
                    .bind("errorCode", error == null ? null : error.code())
                    .bind("errorMessage", error == null ? null : error.message())
                    .bind("errorRetryAfterSeconds", error == null ? null : error.retryAfterSeconds())
                    .bind("inputTokens", usage == null ? null : usage.inputTokens())
                    .bind("outputTokens", usage == null ? null : usage.outputTokens())
                    .bind("totalTokens", usage == null ? null : usage.totalTokens())
                    .bind("guardrailsFailureReason", run.guardrailsFailureReason());
        }
    }

    /** Binds a lease. */
    final class LeaseColumns implements BindRow.Binder<RunLease> {
        @Override
        public void bind(SqlStatement<?> statement, RunLease lease) {
            statement.bind("runId", lease.runId())
                    .bind("instanceId", lease.instanceId())
                    .bind("until", lease.until().toEpochMilli());
        }
    }

    /** Reads a run row. */
    final class Mapper implements RowMapper<Run> {
        private static final ChatJson JSON = ChatJson.shared();

        @Override
        public Run map(ResultSet rs, StatementContext ctx) throws SQLException {
            String errorCode = rs.getString("error_code");
            ErrorInfo error = errorCode == null ? null : new ErrorInfo(errorCode, rs.getString("error_message"),
                    Rows.nullableLong(rs, "error_retry_after_seconds"));
            Long inputTokens = Rows.nullableLong(rs, "input_tokens");
            TokenUsage usage = inputTokens == null ? null
                    : new TokenUsage(inputTokens, rs.getLong("output_tokens"), rs.getLong("total_tokens"));
            Long maxIterations = Rows.nullableLong(rs, "max_iterations");
            return new Run(rs.getString("id"), rs.getString("thread_id"), rs.getString("owner_id"),
                    RunStatus.valueOf(rs.getString("status")), rs.getString("user_message_id"),
                    rs.getString("assistant_message_id"), rs.getString("input"), rs.getString("model_id"),
                    rs.getString("skill"), maxIterations == null ? null : maxIterations.intValue(),
                    JSON.readMap(rs.getString("context")), Rows.instant(rs, "created_at"),
                    Rows.nullableInstant(rs, "started_at"), Rows.nullableInstant(rs, "finished_at"), error, usage,
                    rs.getString("guardrails_failure_reason"));
        }
    }

    /** Reads a lease. */
    final class LeaseMapper implements RowMapper<RunLease> {
        @Override
        public RunLease map(ResultSet rs, StatementContext ctx) throws SQLException {
            return new RunLease(rs.getString("id"), rs.getString("lease_owner"),
                    Instant.ofEpochMilli(rs.getLong("lease_until")));
        }
    }
}
