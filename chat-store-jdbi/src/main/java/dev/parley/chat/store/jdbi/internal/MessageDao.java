package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.UserMessage;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.jdbi.v3.core.JdbiException;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.SqlStatement;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.sqlobject.config.RegisterRowMapper;
import org.jdbi.v3.sqlobject.customizer.Bind;
import org.jdbi.v3.sqlobject.customizer.BindList;
import org.jdbi.v3.sqlobject.customizer.BindMap;
import org.jdbi.v3.sqlobject.customizer.Define;
import org.jdbi.v3.sqlobject.statement.SqlBatch;
import org.jdbi.v3.sqlobject.statement.SqlQuery;
import org.jdbi.v3.sqlobject.statement.SqlUpdate;
import org.jspecify.annotations.Nullable;

/**
 * The messages ({@code parley_messages}): each stored as its JSON body beside the columns the reads select
 * and order by ({@code save_order}, the place its first save gave it), its search column (SQLite: the
 * searchable text, PostgreSQL: its vector; see {@link SearchText}), its client id and its place in the
 * thread's tree (see {@link MessageTreeDao}). Owns
 * the upsert, the top-level pages of a thread, the steps of runs (each run's newest, a run's page after a
 * cursor, their counts), the answer variants of parents and the
 * reads by id and by client id. The upsert and the reading of a client-id violation differ between SQLite
 * ({@link Sqlite}: its search index is kept by triggers) and PostgreSQL ({@link Postgres}: the row carries
 * its search vector); the store uses its database's interface ({@link #of}). Reads return bodies;
 * {@link #decode} turns them into messages, off the connection.
 */
@RegisterRowMapper(MessageDao.OrderedBody.Mapper.class)
@RegisterRowMapper(MessageDao.Variant.Mapper.class)
@RegisterRowMapper(MessageDao.StepCount.Mapper.class)
public interface MessageDao {
    /** The unique index that keeps a client id to one user message per thread (migration V5). */
    String CLIENT_ID_INDEX = "parley_messages_client_id";

    /**
     * When a top-level message's parent's jump pointer leads as far back again as the parent's own, the new
     * message jumps twice as far (to the jump's jump); otherwise to its parent. This skew-binary scheme
     * (Myers, 1983) reaches any ancestor in O(log depth) steps ({@link MessageTreeDao#ANCESTOR_AT_DEPTH}).
     */
    String JUMPS_FURTHER = "p.branch_depth - p.branch_jump_depth = j.branch_depth - j.branch_jump_depth";

    /**
     * The upsert's parts: it inserts a message, or replaces it keeping its {@code save_order} (its place in the
     * thread). A top-level message's depth and jump pointer come from its parent's row (stored before it, or
     * earlier in the batch): depth 0 and itself for a message without a stored parent; steps have none. Each
     * database's statement adds its search column ({@link Sqlite#UPSERT_MESSAGE}: the text,
     * {@link Postgres#UPSERT_MESSAGE}: its vector). (SQLite wants a WHERE before the ON CONFLICT of an
     * INSERT … SELECT.)
     */
    String UPSERT_COLUMNS = "id, thread_id, run_id, parent_message_id, kind, top_level, status, created_at, body, "
            + "client_message_id, branch_depth, branch_jump, branch_jump_depth";

    String UPSERT_VALUES = "SELECT :id, :threadId, :runId, :parentMessageId, :kind, :topLevel, :status, :createdAt, "
            + ":body, :clientMessageId, "
            + "CASE WHEN NOT :topLevel THEN NULL WHEN p.id IS NULL THEN 0 ELSE p.branch_depth + 1 END, "
            + "CASE WHEN NOT :topLevel THEN NULL WHEN p.id IS NULL THEN :id "
            + "WHEN " + JUMPS_FURTHER + " THEN j.branch_jump ELSE p.id END, "
            + "CASE WHEN NOT :topLevel THEN NULL WHEN p.id IS NULL THEN 0 "
            + "WHEN " + JUMPS_FURTHER + " THEN j.branch_jump_depth ELSE p.branch_depth END";

    String UPSERT_JOIN_PARENT = " LEFT JOIN parley_messages p ON p.id = :parentMessageId AND p.thread_id = :threadId "
            + "AND p.top_level = TRUE "
            + "LEFT JOIN parley_messages j ON j.id = p.branch_jump "
            + "WHERE TRUE ON CONFLICT (id) DO UPDATE SET ";

    String UPSERT_FROM_PARENT = " FROM (SELECT 1 AS one) origin" + UPSERT_JOIN_PARENT;

    String UPSERT_REPLACE = "thread_id = excluded.thread_id, run_id = excluded.run_id, "
            + "parent_message_id = excluded.parent_message_id, kind = excluded.kind, top_level = excluded.top_level, "
            + "status = excluded.status, created_at = excluded.created_at, body = excluded.body, "
            + "client_message_id = excluded.client_message_id, branch_depth = excluded.branch_depth, "
            + "branch_jump = excluded.branch_jump, branch_jump_depth = excluded.branch_jump_depth";

    String FIND_MESSAGE = "SELECT body FROM parley_messages WHERE id = :id";

    /** Hot: the newest page of a thread (newest first; the store reverses it). */
    String TOP_LEVEL_NEWEST = "SELECT body FROM parley_messages "
            + "WHERE thread_id = :threadId AND top_level = TRUE "
            + "ORDER BY save_order DESC LIMIT :limit";

    /** Hot: the page before a cursor message (newest first; the store reverses it). */
    String TOP_LEVEL_BEFORE = "SELECT body FROM parley_messages "
            + "WHERE thread_id = :threadId AND top_level = TRUE AND save_order < ("
            + "SELECT c.save_order FROM parley_messages c "
            + "WHERE c.id = :beforeId AND c.thread_id = :threadId AND c.top_level = TRUE) "
            + "ORDER BY save_order DESC LIMIT :limit";

    /**
     * Hot: the newest {@code :limit} steps of the run {@code :<name>}, newest first: the run index read
     * backwards from the run's end, as far as the limit. {@link #newestStepsSql} puts one of these per run of a
     * page in one statement.
     */
    String NEWEST_STEPS_OF_RUN = "SELECT save_order, body FROM parley_messages "
            + "WHERE run_id = :%s AND top_level = FALSE ORDER BY save_order DESC LIMIT :limit";

    /** How many runs one statement of {@link #newestStepsSql} reads at most (SQLite takes 500 selects in one). */
    int RUNS_PER_STEP_READ = 100;

    /** Hot: a run's first page of steps, oldest first (an export reads on from its last). */
    String STEPS_FIRST = "SELECT body FROM parley_messages "
            + "WHERE run_id = :runId AND top_level = FALSE ORDER BY save_order LIMIT :limit";

    /** Hot: the page of a run's steps after a cursor step, oldest first. */
    String STEPS_AFTER = "SELECT body FROM parley_messages "
            + "WHERE run_id = :runId AND top_level = FALSE AND save_order > ("
            + "SELECT c.save_order FROM parley_messages c "
            + "WHERE c.id = :afterId AND c.run_id = :runId AND c.top_level = FALSE) "
            + "ORDER BY save_order LIMIT :limit";

    /**
     * How many steps each run has: the run's range of the run index, each entry's row checked for
     * {@code top_level}; it costs the run's length (of index entries, not of bodies handed over).
     */
    String COUNT_STEPS = "SELECT run_id, COUNT(*) AS steps FROM parley_messages "
            + "WHERE run_id IN (<runIds>) AND top_level = FALSE GROUP BY run_id";

    /** Hot: the answers sharing a parent, for the variant arrows. */
    String VARIANT_IDS = "SELECT parent_message_id, id FROM parley_messages "
            + "WHERE parent_message_id IN (<parentIds>) AND kind = 'assistant' ORDER BY save_order";

    /** The messages with these ids (with their order, to merge the chunks of a long id list). */
    String FIND_MESSAGES = "SELECT save_order, body FROM parley_messages WHERE id IN (<ids>) ORDER BY save_order";

    /** A thread's user message by the id its client gave it (the unique client-id index). */
    String FIND_BY_CLIENT_ID = "SELECT body FROM parley_messages "
            + "WHERE thread_id = :threadId AND client_message_id = :clientMessageId AND kind = 'user'";

    /** The first page of a whole thread, every branch, in first-save order (an export reads on from its last). */
    String TOP_LEVEL_FIRST = "SELECT body FROM parley_messages "
            + "WHERE thread_id = :threadId AND top_level = TRUE ORDER BY save_order LIMIT :limit";

    /** The page after a cursor message, every branch, in first-save order. */
    String TOP_LEVEL_AFTER = "SELECT body FROM parley_messages "
            + "WHERE thread_id = :threadId AND top_level = TRUE AND save_order > ("
            + "SELECT c.save_order FROM parley_messages c "
            + "WHERE c.id = :afterId AND c.thread_id = :threadId AND c.top_level = TRUE) "
            + "ORDER BY save_order LIMIT :limit";

    /** The interface to attach on a database. */
    static Class<? extends MessageDao> of(Dialect dialect) {
        return switch (dialect) {
            case SQLITE -> Sqlite.class;
            case POSTGRESQL -> Postgres.class;
        };
    }

    /**
     * A message with what is written before the write lock is taken: its JSON body, its searchable text
     * ({@link SearchText#of(Message)}) and, on PostgreSQL, that text's search vector.
     */
    record Encoded(Message message, String body, @Nullable String searchText, @Nullable String searchVector) {
    }

    /**
     * Upserts messages (one JDBC batch) in the order given; the batch holds each id once. Each count is 0
     * where the message's thread does not exist (PostgreSQL; SQLite's foreign key fails the statement).
     */
    int[] upsertInOrder(List<Encoded> messages);

    /** True if this failure of one statement of the database is the client-id index's unique violation. */
    boolean violatesClientId(SQLException e);

    /**
     * Upserts messages (one JDBC batch; the batch holds each id once). A user message whose client id another
     * user message of its thread has fails the batch with CONFLICT.
     *
     * @return the run ids of the messages not stored because their thread does not exist
     */
    default Set<String> upsert(List<Encoded> messages) {
        int[] counts;
        try {
            counts = upsertInOrder(messages);
        } catch (JdbiException e) {
            if (UniqueViolations.any(e, this::violatesClientId)) {
                throw clientIdConflict(messages, e);
            }
            throw e;
        }
        Set<String> threadGone = new LinkedHashSet<>();
        for (int i = 0; i < counts.length; i++) {
            if (counts[i] == 0) {
                threadGone.add(messages.get(i).message().runId());
            }
        }
        return threadGone;
    }

    @SqlQuery(FIND_MESSAGE)
    Optional<String> findBody(String id);

    @SqlQuery(TOP_LEVEL_NEWEST)
    List<String> newestTopLevel(String threadId, int limit);

    @SqlQuery(TOP_LEVEL_BEFORE)
    List<String> topLevelBefore(String threadId, String beforeId, int limit);

    /** A page of a thread's top-level messages, oldest first: the newest, or those before a cursor message. */
    default List<String> topLevelPage(String threadId, @Nullable String beforeMessageId, int limit) {
        List<String> newestFirst = beforeMessageId == null ? newestTopLevel(threadId, limit)
                : topLevelBefore(threadId, beforeMessageId, limit);
        List<String> page = new ArrayList<>(newestFirst.size());
        for (int i = newestFirst.size() - 1; i >= 0; i--) {
            page.add(newestFirst.get(i));
        }
        return page;
    }

    /**
     * The statement reading the newest steps of {@code runs} runs at once: a {@link #NEWEST_STEPS_OF_RUN} for
     * each, its run id bound as {@code run0}, {@code run1}, …, joined by {@code UNION ALL}. Each select is
     * bounded by its own {@code LIMIT}; the rows come run by run, each run's newest first.
     */
    static String newestStepsSql(int runs) {
        StringBuilder sql = new StringBuilder();
        for (int i = 0; i < runs; i++) {
            sql.append(i == 0 ? "" : " UNION ALL ").append("SELECT save_order, body FROM (")
                    .append(NEWEST_STEPS_OF_RUN.formatted("run" + i)).append(") s").append(i);
        }
        return sql.toString();
    }

    @SqlQuery("<newestSteps>")
    List<OrderedBody> newestSteps(@Define("newestSteps") String sql, @BindMap Map<String, Object> runIds,
            @Bind("limit") int limit);

    /**
     * The newest {@code limitPerRun} steps of each run, in save order: one statement per
     * {@value #RUNS_PER_STEP_READ} runs, each run's rows bounded by the limit.
     */
    default List<String> newestStepBodies(Collection<String> runIds, int limitPerRun) {
        List<OrderedBody> rows = new ArrayList<>();
        List<String> distinct = new ArrayList<>(new LinkedHashSet<>(runIds));
        for (int from = 0; from < distinct.size(); from += RUNS_PER_STEP_READ) {
            List<String> chunk = distinct.subList(from, Math.min(distinct.size(), from + RUNS_PER_STEP_READ));
            Map<String, Object> binds = new LinkedHashMap<>();
            for (int i = 0; i < chunk.size(); i++) {
                binds.put("run" + i, chunk.get(i));
            }
            rows.addAll(newestSteps(newestStepsSql(chunk.size()), binds, limitPerRun));
        }
        return bodiesInOrder(rows, true);
    }

    @SqlQuery(STEPS_FIRST)
    List<String> firstSteps(String runId, int limit);

    @SqlQuery(STEPS_AFTER)
    List<String> stepsAfter(String runId, String afterId, int limit);

    /** A page of a run's steps, oldest first: from its first step, or after a cursor step. */
    default List<String> stepPageAfter(String runId, @Nullable String afterStepId, int limit) {
        return afterStepId == null ? firstSteps(runId, limit) : stepsAfter(runId, afterStepId, limit);
    }

    @SqlQuery(COUNT_STEPS)
    List<StepCount> stepCounts(@BindList List<String> runIds);

    /** How many steps each run that has any has (long id lists are counted in chunks). */
    default Map<String, Integer> countSteps(Collection<String> runIds) {
        Map<String, Integer> counts = new LinkedHashMap<>();
        for (List<String> chunk : InLists.chunks(runIds)) {
            for (StepCount row : stepCounts(chunk)) {
                counts.put(row.runId(), row.steps());
            }
        }
        return counts;
    }

    /** The bodies of rows read in chunks, each in save order: merged into one order if there were several. */
    private static List<String> bodiesInOrder(List<OrderedBody> rows, boolean merge) {
        if (merge) {
            rows.sort(Comparator.comparingLong(OrderedBody::saveOrder));
        }
        List<String> bodies = new ArrayList<>(rows.size());
        for (OrderedBody row : rows) {
            bodies.add(row.body());
        }
        return bodies;
    }

    @SqlQuery(VARIANT_IDS)
    List<Variant> variants(@BindList List<String> parentIds);

    /** The assistant answers of each parent that has any, in save order; parents in the order given. */
    default Map<String, List<String>> variantIds(Collection<String> parentMessageIds) {
        Map<String, List<String>> found = new LinkedHashMap<>();
        for (List<String> chunk : InLists.chunks(parentMessageIds)) {
            for (Variant row : variants(chunk)) {
                found.computeIfAbsent(row.parentId(), k -> new ArrayList<>()).add(row.id());
            }
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

    @SqlQuery(FIND_MESSAGES)
    List<OrderedBody> find(@BindList List<String> ids);

    /** The messages with these ids that exist, in save order (long id lists are read in chunks and merged). */
    default List<String> findBodies(Collection<String> ids) {
        List<OrderedBody> rows = new ArrayList<>();
        List<List<String>> chunks = InLists.chunks(ids);
        for (List<String> chunk : chunks) {
            rows.addAll(find(chunk));
        }
        return bodiesInOrder(rows, chunks.size() > 1);
    }

    @SqlQuery(FIND_BY_CLIENT_ID)
    Optional<String> findByClientId(String threadId, String clientMessageId);

    @SqlQuery(TOP_LEVEL_FIRST)
    List<String> firstTopLevel(String threadId, int limit);

    @SqlQuery(TOP_LEVEL_AFTER)
    List<String> topLevelAfter(String threadId, String afterId, int limit);

    /** A page of a whole thread (every branch), oldest first: from the start, or after a cursor message. */
    default List<String> topLevelPageAfter(String threadId, @Nullable String afterMessageId, int limit) {
        return afterMessageId == null ? firstTopLevel(threadId, limit) : topLevelAfter(threadId, afterMessageId, limit);
    }

    /** A stored message; one that cannot be read (corrupt, or of a type this version does not know) is a store failure. */
    static Message decode(String body) {
        try {
            return ChatJson.shared().readMessage(body);
        } catch (ChatException e) {
            throw new ChatException(ErrorCode.STORE_FAILURE, "a stored message cannot be read", e);
        }
    }

    /** Stored messages, in the order given. */
    static List<Message> decodeAll(List<String> bodies) {
        List<Message> messages = new ArrayList<>(bodies.size());
        for (String body : bodies) {
            messages.add(decode(body));
        }
        return messages;
    }

    /** CONFLICT naming the client id (the database does not say which of the batch's messages it was). */
    private static ChatException clientIdConflict(List<Encoded> messages, JdbiException cause) {
        Set<String> ids = new LinkedHashSet<>();
        String threadId = null;
        for (Encoded encoded : messages) {
            if (encoded.message() instanceof UserMessage user && user.clientMessageId() != null) {
                ids.add(user.clientMessageId());
                threadId = user.threadId();
            }
        }
        String message = ids.size() == 1
                ? "thread " + threadId + " already has a message with client id " + ids.iterator().next()
                : "a thread already has a message with one of the client ids " + ids;
        return new ChatException(ErrorCode.CONFLICT, message, cause);
    }

    // ------------------------------------------------------------------ the dialects

    /**
     * SQLite: the row with its searchable text, which triggers copy into the FTS5 index; a unique violation is
     * read from the driver's message.
     */
    interface Sqlite extends MessageDao {
        String UPSERT_MESSAGE = "INSERT INTO parley_messages (" + UPSERT_COLUMNS + ", search_text) " + UPSERT_VALUES
                + ", :searchText" + UPSERT_FROM_PARENT + UPSERT_REPLACE + ", search_text = excluded.search_text";

        @Override
        @SqlBatch(UPSERT_MESSAGE)
        int[] upsertInOrder(@BindRow(TextColumns.class) List<Encoded> messages);

        /** sqlite-jdbc names the index's columns: {@code … parley_messages.thread_id, parley_messages.client_message_id}. */
        @Override
        default boolean violatesClientId(SQLException e) {
            return UniqueViolations.sqlite(e, "parley_messages.client_message_id");
        }
    }

    /**
     * PostgreSQL: the row with its search vector (built by the store, see {@link SearchText#vector}); the text
     * itself is only in the body.
     */
    interface Postgres extends MessageDao {
        /**
         * The upsert from the thread's row, locked first ({@code FOR KEY SHARE}; no row, count 0, when the
         * thread does not exist): a thread's delete locks the thread, then its messages, so a batch must not
         * hold a message's row while it waits for the thread (see {@link RunDao.Postgres}). The row takes its
         * thread's owner, which the search reads by (migration V11).
         */
        String UPSERT_MESSAGE = "INSERT INTO parley_messages (" + UPSERT_COLUMNS + ", search_vector, owner_id) "
                + UPSERT_VALUES + ", CAST(:searchVector AS tsvector), origin.owner_id"
                + " FROM (SELECT t.owner_id FROM parley_threads t WHERE t.id = :threadId FOR KEY SHARE) origin"
                + UPSERT_JOIN_PARENT + UPSERT_REPLACE + ", search_vector = excluded.search_vector, "
                + "owner_id = excluded.owner_id";

        @Override
        @SqlBatch(UPSERT_MESSAGE)
        int[] upsertInOrder(@BindRow(VectorColumns.class) List<Encoded> messages);

        @Override
        default boolean violatesClientId(SQLException e) {
            return UniqueViolations.postgres(e, CLIENT_ID_INDEX);
        }
    }

    // ------------------------------------------------------------------ rows

    /** Binds a message's shared columns. */
    class Columns implements BindRow.Binder<Encoded> {
        @Override
        public void bind(SqlStatement<?> statement, Encoded encoded) {
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
                    .bind("clientMessageId", message instanceof UserMessage user ? user.clientMessageId() : null);
        }
    }

    /** Binds a message's columns and its searchable text. */
    final class TextColumns extends Columns {
        @Override
        public void bind(SqlStatement<?> statement, Encoded encoded) {
            super.bind(statement, encoded);
            statement.bind("searchText", encoded.searchText());
        }
    }

    /** Binds a message's columns and its search vector. */
    final class VectorColumns extends Columns {
        @Override
        public void bind(SqlStatement<?> statement, Encoded encoded) {
            super.bind(statement, encoded);
            statement.bind("searchVector", encoded.searchVector());
        }
    }

    /** A message's body with its place. */
    record OrderedBody(long saveOrder, String body) {
        public static final class Mapper implements RowMapper<OrderedBody> {
            @Override
            public OrderedBody map(ResultSet rs, StatementContext ctx) throws SQLException {
                return new OrderedBody(rs.getLong("save_order"), rs.getString("body"));
            }
        }
    }

    /** How many steps a run has. */
    record StepCount(String runId, int steps) {
        public static final class Mapper implements RowMapper<StepCount> {
            @Override
            public StepCount map(ResultSet rs, StatementContext ctx) throws SQLException {
                return new StepCount(rs.getString("run_id"), rs.getInt("steps"));
            }
        }
    }

    /** An answer and its parent. */
    record Variant(String parentId, String id) {
        public static final class Mapper implements RowMapper<Variant> {
            @Override
            public Variant map(ResultSet rs, StatementContext ctx) throws SQLException {
                return new Variant(rs.getString(1), rs.getString(2));
            }
        }
    }
}
