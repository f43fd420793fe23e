package dev.parley.chat.store.jdbi.internal;

import java.util.List;

/**
 * Every statement the store runs, shared by SQLite and PostgreSQL (both take {@code INSERT … ON CONFLICT}).
 * Named parameters are {@code :name}; {@code <name>} is a list bound with {@code bindList}. The query-plan
 * tests run exactly these strings, so a change that loses an index fails them.
 */
public final class Sql {
    private Sql() {
    }

    // ------------------------------------------------------------------ threads

    private static final String THREAD_COLUMNS =
            "id, owner_id, title, runtime_session_id, model_id, skill, status, created_at, last_message_at";

    public static final String INSERT_THREAD = "INSERT INTO parley_threads (" + THREAD_COLUMNS + ") "
            + "VALUES (:id, :ownerId, :title, :runtimeSessionId, :modelId, :skill, :status, :createdAt, :lastMessageAt) "
            + "ON CONFLICT (id) DO NOTHING";

    public static final String FIND_THREAD = "SELECT " + THREAD_COLUMNS + " FROM parley_threads WHERE id = :id";

    /** Hot: the thread list of an owner, newest activity first. */
    public static final String LIST_THREADS = "SELECT " + THREAD_COLUMNS + " FROM parley_threads "
            + "WHERE owner_id = :ownerId ORDER BY last_message_at DESC, id DESC LIMIT :limit";

    /**
     * Hot: the page after a cursor (keyset paging on the list's order). The row-value comparison, unlike
     * its spelled-out {@code a < x OR (a = x AND b < y)}, lets both planners enter the owner-activity index
     * at the cursor instead of reading the owner's threads from the newest on and filtering them.
     */
    public static final String LIST_THREADS_AFTER = "SELECT " + THREAD_COLUMNS + " FROM parley_threads "
            + "WHERE owner_id = :ownerId AND (last_message_at, id) < (:afterAt, :afterId) "
            + "ORDER BY last_message_at DESC, id DESC LIMIT :limit";

    public static final String UPDATE_THREAD = "UPDATE parley_threads "
            + "SET title = :title, model_id = :modelId, skill = :skill, status = :status WHERE id = :id";

    public static final String TOUCH_THREAD = "UPDATE parley_threads SET "
            + "runtime_session_id = COALESCE(:runtimeSessionId, runtime_session_id), "
            + "last_message_at = CASE WHEN :lastMessageAt > last_message_at THEN :lastMessageAt ELSE last_message_at END, "
            + "title = COALESCE(title, :defaultTitle) "
            + "WHERE id = :id";

    public static final String DELETE_THREAD = "DELETE FROM parley_threads WHERE id = :threadId";

    private static final String RUNS_OF_THREAD = "(SELECT r.id FROM parley_runs r WHERE r.thread_id = :threadId)";

    /** What else goes with a thread, deleted in this order after the thread row, in one transaction. */
    public static final List<String> DELETE_THREAD_CONTENT = List.of(
        "DELETE FROM parley_run_events WHERE run_id IN " + RUNS_OF_THREAD,
        "DELETE FROM parley_seq_reservations WHERE run_id IN " + RUNS_OF_THREAD,
        "DELETE FROM parley_inputs WHERE run_id IN " + RUNS_OF_THREAD,
        "DELETE FROM parley_thread_approvals WHERE thread_id = :threadId",
        "DELETE FROM parley_host_actions WHERE run_id IN " + RUNS_OF_THREAD,
        "DELETE FROM parley_feedback WHERE thread_id = :threadId "
                + "OR message_id IN (SELECT m.id FROM parley_messages m WHERE m.thread_id = :threadId)",
        "DELETE FROM parley_messages WHERE thread_id = :threadId",
        "DELETE FROM parley_runs WHERE thread_id = :threadId");

    // ------------------------------------------------------------------ messages

    /** Inserts a message, or replaces it keeping its {@code save_order} (its place in the thread). */
    public static final String UPSERT_MESSAGE = "INSERT INTO parley_messages "
            + "(id, thread_id, run_id, parent_message_id, kind, top_level, status, created_at, body) "
            + "VALUES (:id, :threadId, :runId, :parentMessageId, :kind, :topLevel, :status, :createdAt, :body) "
            + "ON CONFLICT (id) DO UPDATE SET thread_id = excluded.thread_id, run_id = excluded.run_id, "
            + "parent_message_id = excluded.parent_message_id, kind = excluded.kind, top_level = excluded.top_level, "
            + "status = excluded.status, created_at = excluded.created_at, body = excluded.body";

    public static final String FIND_MESSAGE = "SELECT body FROM parley_messages WHERE id = :id";

    /** Hot: the newest page of a thread (newest first; the store reverses it). */
    public static final String TOP_LEVEL_NEWEST = "SELECT body FROM parley_messages "
            + "WHERE thread_id = :threadId AND top_level = TRUE "
            + "ORDER BY save_order DESC LIMIT :limit";

    /** Hot: the page before a cursor message (newest first; the store reverses it). */
    public static final String TOP_LEVEL_BEFORE = "SELECT body FROM parley_messages "
            + "WHERE thread_id = :threadId AND top_level = TRUE AND save_order < ("
            + "SELECT c.save_order FROM parley_messages c "
            + "WHERE c.id = :beforeId AND c.thread_id = :threadId AND c.top_level = TRUE) "
            + "ORDER BY save_order DESC LIMIT :limit";

    /** Hot: the steps of the runs on a page (with their order, to merge the chunks of a long id list). */
    public static final String STEP_MESSAGES = "SELECT save_order, body FROM parley_messages "
            + "WHERE run_id IN (<runIds>) AND top_level = FALSE ORDER BY save_order";

    /** Hot: the answers sharing a parent, for the variant arrows. */
    public static final String VARIANT_IDS = "SELECT parent_message_id, id FROM parley_messages "
            + "WHERE parent_message_id IN (<parentIds>) AND kind = 'assistant' ORDER BY save_order";

    // ------------------------------------------------------------------ runs

    private static final String RUN_COLUMNS = "id, thread_id, owner_id, status, user_message_id, "
            + "assistant_message_id, input, model_id, skill, max_iterations, context, created_at, started_at, "
            + "finished_at, error_code, error_message, input_tokens, output_tokens, total_tokens, "
            + "guardrails_failure_reason";

    /** Inserts a run, or replaces all of it but its id and {@code save_order}. */
    public static final String UPSERT_RUN = "INSERT INTO parley_runs (" + RUN_COLUMNS + ") VALUES (:id, :threadId, "
            + ":ownerId, :status, :userMessageId, :assistantMessageId, :input, :modelId, :skill, :maxIterations, "
            + ":context, :createdAt, :startedAt, :finishedAt, :errorCode, :errorMessage, :inputTokens, "
            + ":outputTokens, :totalTokens, :guardrailsFailureReason) "
            + "ON CONFLICT (id) DO UPDATE SET thread_id = excluded.thread_id, owner_id = excluded.owner_id, "
            + "status = excluded.status, user_message_id = excluded.user_message_id, "
            + "assistant_message_id = excluded.assistant_message_id, input = excluded.input, "
            + "model_id = excluded.model_id, skill = excluded.skill, max_iterations = excluded.max_iterations, "
            + "context = excluded.context, created_at = excluded.created_at, started_at = excluded.started_at, "
            + "finished_at = excluded.finished_at, error_code = excluded.error_code, "
            + "error_message = excluded.error_message, input_tokens = excluded.input_tokens, "
            + "output_tokens = excluded.output_tokens, total_tokens = excluded.total_tokens, "
            + "guardrails_failure_reason = excluded.guardrails_failure_reason";

    public static final String FIND_RUN = "SELECT " + RUN_COLUMNS + " FROM parley_runs WHERE id = :id";

    /** Hot at start-up: the runs a new engine recovers. */
    public static final String FIND_RUNS = "SELECT " + RUN_COLUMNS + " FROM parley_runs "
            + "WHERE status IN (<statuses>) ORDER BY save_order";

    /**
     * The partial unique index (migration V3) that keeps a thread to one RUNNING or WAITING_FOR_INPUT run;
     * a batch breaking it fails with a unique violation naming it (SQLite: naming its column).
     */
    public static final String ONE_ACTIVE_RUN_INDEX = "parley_runs_one_active_per_thread";

    /** Hot: is the thread busy? */
    public static final String FIND_THREAD_RUNS = "SELECT " + RUN_COLUMNS + " FROM parley_runs "
            + "WHERE thread_id = :threadId AND status IN (<statuses>) ORDER BY save_order";

    // ------------------------------------------------------------------ leases

    /** Sets a run's lease (the run is written earlier in the same transaction). */
    public static final String SET_LEASE = "UPDATE parley_runs SET lease_owner = :instanceId, lease_until = :until "
            + "WHERE id = :runId";

    /** Renews the leases an instance holds, or takes those nobody holds. */
    public static final String RENEW_LEASES = "UPDATE parley_runs SET lease_owner = :instanceId, lease_until = :until "
            + "WHERE id IN (<runIds>) AND (lease_owner = :instanceId OR lease_owner IS NULL)";

    public static final String HELD_LEASES = "SELECT id FROM parley_runs WHERE id IN (<runIds>) "
            + "AND lease_owner = :instanceId";

    /** Takes an active run over if its lease expired or it has none; the row count says whether it worked. */
    public static final String TAKE_OVER_RUN = "UPDATE parley_runs SET lease_owner = :instanceId, lease_until = :until "
            + "WHERE id = :runId AND status IN ('QUEUED', 'RUNNING', 'WAITING_FOR_INPUT') "
            + "AND (lease_until IS NULL OR lease_until < :now)";

    /** The active runs whose holder stopped renewing (a scan of the few active runs, by the status index). */
    public static final String FIND_EXPIRED_LEASES = "SELECT " + RUN_COLUMNS + " FROM parley_runs "
            + "WHERE status IN ('QUEUED', 'RUNNING', 'WAITING_FOR_INPUT') "
            + "AND (lease_until IS NULL OR lease_until < :now) ORDER BY save_order";

    /**
     * PostgreSQL fence of a batch (ids in order): the lease owners of its runs, their rows locked until the
     * batch commits. A take-over (an UPDATE of the row) then waits for the batch, and a batch waiting for a
     * take-over reads the lease it committed. FOR NO KEY UPDATE rather than FOR SHARE: the batch may update
     * these rows itself (a run's upsert, its lease), and two batches sharing a row's lock and both upgrading
     * it would deadlock; this way the second waits for the first.
     */
    public static final String FENCE_LOCK_RUNS = "SELECT id, lease_owner FROM parley_runs WHERE id IN (<runIds>) "
            + "ORDER BY id FOR NO KEY UPDATE";

    /**
     * SQLite fence of a batch: its runs leased by an instance other than {@code :fence}. Written as an
     * UPDATE that changes nothing (and a batch with such a run is rolled back anyway) so that, like every
     * write transaction of the store, it starts with a write: a deferred transaction takes the file's write
     * lock here and cannot later fail upgrading a stale read snapshot. From then until the commit no other
     * connection can write the file, so no take-over can come between the check and the batch.
     */
    public static final String FENCE_LOST_RUNS = "UPDATE parley_runs SET lease_owner = lease_owner "
            + "WHERE id IN (<runIds>) AND lease_owner <> :fence RETURNING id, lease_owner";

    public static final String FIND_LEASE = "SELECT lease_owner, lease_until FROM parley_runs "
            + "WHERE id = :runId AND lease_owner IS NOT NULL";

    // ------------------------------------------------------------------ events

    /** Appends an event; an existing {@code (run_id, seq)} is left as it is. */
    public static final String INSERT_EVENT = "INSERT INTO parley_run_events (run_id, seq, created_at, type, payload) "
            + "VALUES (:runId, :seq, :createdAt, :type, :payload) ON CONFLICT (run_id, seq) DO NOTHING";

    /** PostgreSQL: a batch of events in one statement, one array per column, in the same order. */
    public static final String INSERT_EVENTS_UNNEST = "INSERT INTO parley_run_events (run_id, seq, created_at, type, payload) "
            + "SELECT * FROM unnest(CAST(:runIds AS text[]), CAST(:seqs AS bigint[]), CAST(:createdAts AS bigint[]), "
            + "CAST(:types AS text[]), CAST(:payloads AS text[])) ON CONFLICT (run_id, seq) DO NOTHING";

    /** Hot: a replay page after a cursor (a range of the primary key). */
    public static final String READ_EVENTS = "SELECT seq, created_at, payload FROM parley_run_events "
            + "WHERE run_id = :runId AND seq > :afterSeq ORDER BY seq LIMIT :limit";

    /** Hot: the newest stored seq of a run (one primary-key probe). */
    public static final String LAST_SEQ = "SELECT seq FROM parley_run_events "
            + "WHERE run_id = :runId ORDER BY seq DESC LIMIT 1";

    /** Raises a run's seq reservation, never lowers it. */
    public static final String RESERVE_SEQ = "INSERT INTO parley_seq_reservations (run_id, reserved_seq) "
            + "VALUES (:runId, :upTo) ON CONFLICT (run_id) DO UPDATE SET reserved_seq = excluded.reserved_seq "
            + "WHERE excluded.reserved_seq > parley_seq_reservations.reserved_seq";

    public static final String RESERVED_SEQ = "SELECT reserved_seq FROM parley_seq_reservations WHERE run_id = :runId";

    // ------------------------------------------------------------------ pending inputs

    private static final String INPUT_COLUMNS = "run_id, input_id, message_id, kind, request, deadline, resume_token, "
            + "state, answer, created_at, resolved_at";

    /** Inserts an input; an existing {@code (run_id, input_id)} is left as it is. */
    public static final String INSERT_INPUT = "INSERT INTO parley_inputs (" + INPUT_COLUMNS + ") VALUES "
            + "(:runId, :inputId, :messageId, :kind, :request, :deadline, :resumeToken, :state, :answer, :createdAt, "
            + ":resolvedAt) ON CONFLICT (run_id, input_id) DO NOTHING";

    public static final String FIND_INPUT = "SELECT " + INPUT_COLUMNS + " FROM parley_inputs "
            + "WHERE run_id = :runId AND input_id = :inputId";

    public static final String PENDING_INPUTS = "SELECT " + INPUT_COLUMNS + " FROM parley_inputs "
            + "WHERE run_id = :runId AND state = 'PENDING' ORDER BY save_order";

    /** Answers an input only while it is pending: of racing answers, one updates a row. */
    public static final String ANSWER_INPUT = "UPDATE parley_inputs "
            + "SET state = 'ANSWERED', answer = :answer, resolved_at = :resolvedAt "
            + "WHERE run_id = :runId AND input_id = :inputId AND state = 'PENDING'";

    public static final String REOPEN_INPUT = "UPDATE parley_inputs SET state = 'PENDING', answer = NULL, resolved_at = NULL "
            + "WHERE run_id = :runId AND input_id = :inputId AND state = 'ANSWERED'";

    /** Resolves a pending input without an answer (EXPIRED or CANCELLED); of racing calls, one updates the row. */
    public static final String CLOSE_INPUT = "UPDATE parley_inputs SET state = :state, resolved_at = :resolvedAt "
            + "WHERE run_id = :runId AND input_id = :inputId AND state = 'PENDING'";

    public static final String CANCEL_PENDING_INPUTS = "UPDATE parley_inputs SET state = 'CANCELLED', resolved_at = :resolvedAt "
            + "WHERE run_id = :runId AND state = 'PENDING'";

    /** Remembers an approval for a thread (only for a thread that exists); a repeat changes nothing. */
    public static final String REMEMBER_APPROVAL = "INSERT INTO parley_thread_approvals (thread_id, tool_name, approved_at) "
            + "SELECT :threadId, :toolName, :approvedAt WHERE EXISTS (SELECT 1 FROM parley_threads WHERE id = :threadId) "
            + "ON CONFLICT (thread_id, tool_name) DO NOTHING";

    public static final String IS_APPROVED_FOR_THREAD = "SELECT COUNT(*) FROM parley_thread_approvals "
            + "WHERE thread_id = :threadId AND tool_name = :toolName";

    // ------------------------------------------------------------------ feedback

    public static final String UPSERT_FEEDBACK = "INSERT INTO parley_feedback "
            + "(message_id, owner_id, thread_id, run_id, rating, comment, created_at) "
            + "VALUES (:messageId, :ownerId, :threadId, :runId, :rating, :comment, :createdAt) "
            + "ON CONFLICT (message_id, owner_id) DO UPDATE SET thread_id = excluded.thread_id, "
            + "run_id = excluded.run_id, rating = excluded.rating, comment = excluded.comment, "
            + "created_at = excluded.created_at";

    public static final String FIND_FEEDBACK = "SELECT thread_id, run_id, message_id, owner_id, rating, comment, "
            + "created_at FROM parley_feedback WHERE message_id = :messageId AND owner_id = :ownerId";

    // ------------------------------------------------------------------ host actions

    /** Creates an execution unless it exists: of racing callers, one inserts a row. */
    public static final String CLAIM_HOST_ACTION = "INSERT INTO parley_host_actions "
            + "(run_id, execution_id, name, arguments, error, claimed_at) "
            + "VALUES (:runId, :executionId, :name, :arguments, FALSE, :claimedAt) "
            + "ON CONFLICT (run_id, execution_id) DO NOTHING";

    public static final String FIND_HOST_ACTION = "SELECT run_id, execution_id, name, arguments, result, error, "
            + "claimed_at, completed_at FROM parley_host_actions WHERE run_id = :runId AND execution_id = :executionId";

    /** Records the first result of an execution; a later one is ignored. */
    public static final String COMPLETE_HOST_ACTION = "UPDATE parley_host_actions "
            + "SET result = :result, error = :error, completed_at = :completedAt "
            + "WHERE run_id = :runId AND execution_id = :executionId AND completed_at IS NULL";

    // ------------------------------------------------------------------ schema

    /** The tables of the current schema version; each is probed when migrations are left to the host. */
    public static final List<String> TABLES = List.of(
        "parley_threads", "parley_messages", "parley_runs", "parley_run_events", "parley_seq_reservations",
        "parley_inputs", "parley_thread_approvals", "parley_feedback", "parley_host_actions");

    /** Queries that fail unless the columns added after version 1 exist (the host ran every migration). */
    public static final List<String> LATER_COLUMN_PROBES = List.of(
        "SELECT lease_owner, lease_until FROM parley_runs WHERE 1 = 0");

    /** SQLite: 1 if the index {@code :name} exists, else 0. */
    public static final String SQLITE_INDEX_EXISTS =
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'index' AND name = :name";

    /** PostgreSQL: 1 if the index {@code :name} exists in the search path (where the tables are found), else 0. */
    public static final String POSTGRESQL_INDEX_EXISTS =
            "SELECT CASE WHEN to_regclass(:name) IS NULL THEN 0 ELSE 1 END";

    /** A query that fails unless {@code table} exists and is readable; it reads no row. */
    public static String probe(String table) {
        return "SELECT COUNT(*) FROM " + table + " WHERE 1 = 0";
    }
}
