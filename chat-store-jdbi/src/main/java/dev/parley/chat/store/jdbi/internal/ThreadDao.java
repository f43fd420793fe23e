package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.store.ThreadCursor;
import dev.parley.chat.store.ThreadTouch;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
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
 * The threads ({@code parley_threads}): creating, reading, listing an owner's threads page by page, renaming
 * and the engine's touches (also of the active branch and the session head). Deleting a thread removes its
 * row here, and the foreign keys' cascades (migration V7) every row that belongs to it. The writes of a
 * title differ: SQLite's
 * title index is kept by triggers ({@link Sqlite}), PostgreSQL's row carries its title's search vector
 * ({@link Postgres}); the store uses its database's interface ({@link #of}). The reads are shared.
 */
@RegisterRowMapper(ThreadDao.Mapper.class)
public interface ThreadDao {
    String COLUMNS = "id, owner_id, title, runtime_session_id, model_id, skill, status, created_at, last_message_at, "
            + "active_leaf_id, session_head_id";

    String VALUES = ":id, :ownerId, :title, :runtimeSessionId, :modelId, :skill, :status, :createdAt, :lastMessageAt, "
            + ":activeLeafId, :sessionHeadId";

    String FIND_THREAD = "SELECT " + COLUMNS + " FROM parley_threads WHERE id = :id";

    /** Hot: the thread list of an owner, newest activity first. */
    String LIST_THREADS = "SELECT " + COLUMNS + " FROM parley_threads "
            + "WHERE owner_id = :ownerId ORDER BY last_message_at DESC, id DESC LIMIT :limit";

    /**
     * Hot: the page after a cursor (keyset paging on the list's order). The row-value comparison, unlike
     * its spelled-out {@code a < x OR (a = x AND b < y)}, lets both planners enter the owner-activity index
     * at the cursor instead of reading the owner's threads from the newest on and filtering them.
     */
    String LIST_THREADS_AFTER = "SELECT " + COLUMNS + " FROM parley_threads "
            + "WHERE owner_id = :ownerId AND (last_message_at, id) < (:afterAt, :afterId) "
            + "ORDER BY last_message_at DESC, id DESC LIMIT :limit";

    /** The fields a person edits. */
    String UPDATE_SET = "title = :title, model_id = :modelId, skill = :skill, status = :status";

    /** A touch: each field it holds (null: leave it), activity only forwards, a default title only into none. */
    String TOUCH_SET = "runtime_session_id = COALESCE(:runtimeSessionId, runtime_session_id), "
            + "last_message_at = CASE WHEN :lastMessageAt > last_message_at THEN :lastMessageAt ELSE last_message_at END, "
            + "title = COALESCE(title, :defaultTitle), "
            + "active_leaf_id = COALESCE(:activeLeafId, active_leaf_id), "
            + "session_head_id = COALESCE(:sessionHeadId, session_head_id)";

    String DELETE_THREAD = "DELETE FROM parley_threads WHERE id = :threadId";

    /** Which of these threads exist (after a batch failed on a foreign key: which threads are gone?). */
    String EXISTING_THREAD_IDS = "SELECT id FROM parley_threads WHERE id IN (<threadIds>)";

    /** A thread's active leaf ('' for none) for a batch that expects it; no row if the thread is gone. */
    String ACTIVE_LEAF = "SELECT COALESCE(active_leaf_id, '') FROM parley_threads WHERE id = :id";

    /** The interface to attach on a database. */
    static Class<? extends ThreadDao> of(Dialect dialect) {
        return switch (dialect) {
            case SQLITE -> Sqlite.class;
            case POSTGRESQL -> Postgres.class;
        };
    }

    /** Inserts a thread unless its id exists; 0 if it did. */
    int insert(ChatThread thread);

    @SqlQuery(FIND_THREAD)
    Optional<ChatThread> find(String id);

    @SqlQuery(LIST_THREADS)
    List<ChatThread> listNewest(String ownerId, int limit);

    @SqlQuery(LIST_THREADS_AFTER)
    List<ChatThread> listAfter(String ownerId, long afterAt, String afterId, int limit);

    /** An owner's threads, newest activity first, after a cursor if there is one. */
    default List<ChatThread> list(String ownerId, @Nullable ThreadCursor after, int limit) {
        return after == null ? listNewest(ownerId, limit)
                : listAfter(ownerId, after.lastMessageAt().toEpochMilli(), after.id(), limit);
    }

    /**
     * The thread's active leaf as a batch that expects it reads it, inside its transaction: '' for none, empty
     * if the thread is gone. PostgreSQL locks the row ({@code FOR NO KEY UPDATE}: two such batches of one thread
     * go one after the other; writers of the thread's runs and messages are not held up).
     */
    Optional<String> activeLeafForUpdate(String id);

    /** Sets the fields a caller may change; 0 if there is no such thread. */
    int update(ChatThread thread);

    /** Applies the engine's touches (one JDBC batch). */
    void touch(List<ThreadTouch> touches);

    @SqlQuery(EXISTING_THREAD_IDS)
    List<String> existingIdsOf(@BindList List<String> threadIds);

    /** Which of these threads exist (long id lists are read in chunks). */
    default Set<String> existingIds(Collection<String> threadIds) {
        Set<String> existing = new HashSet<>();
        for (List<String> chunk : InLists.chunks(threadIds)) {
            existing.addAll(existingIdsOf(chunk));
        }
        return existing;
    }

    /** Deletes the thread's row, and by the foreign keys' cascades every row of it; 0 if there was none. */
    @SqlUpdate(DELETE_THREAD)
    int delete(String threadId);

    /** SQLite: the title as it is; triggers keep the FTS5 title index. */
    interface Sqlite extends ThreadDao {
        String INSERT_THREAD = "INSERT INTO parley_threads (" + COLUMNS + ") VALUES (" + VALUES + ") "
                + "ON CONFLICT (id) DO NOTHING";
        String UPDATE_THREAD = "UPDATE parley_threads SET " + UPDATE_SET + " WHERE id = :id";
        String TOUCH_THREAD = "UPDATE parley_threads SET " + TOUCH_SET + " WHERE id = :id";

        @Override
        @SqlUpdate(INSERT_THREAD)
        int insert(@BindRow(Columns.class) ChatThread thread);

        @Override
        @SqlUpdate(UPDATE_THREAD)
        int update(@BindRow(Columns.class) ChatThread thread);

        @Override
        @SqlBatch(TOUCH_THREAD)
        void touch(@BindRow(TouchColumns.class) List<ThreadTouch> touches);

        @Override
        @SqlQuery(ACTIVE_LEAF)
        Optional<String> activeLeafForUpdate(String id);
    }

    /** PostgreSQL: the title with its search vector (built by the store, see {@link SearchText#vector}). */
    interface Postgres extends ThreadDao {
        String INSERT_THREAD = "INSERT INTO parley_threads (" + COLUMNS + ", title_vector) VALUES (" + VALUES
                + ", CAST(:titleVector AS tsvector)) ON CONFLICT (id) DO NOTHING";
        String UPDATE_THREAD = "UPDATE parley_threads SET " + UPDATE_SET
                + ", title_vector = CAST(:titleVector AS tsvector) WHERE id = :id";
        /** The vector follows the title only where the default title fills an empty one. */
        String TOUCH_THREAD = "UPDATE parley_threads SET " + TOUCH_SET + ", title_vector = CASE WHEN title IS NULL "
                + "THEN CAST(:defaultTitleVector AS tsvector) ELSE title_vector END WHERE id = :id";

        @Override
        @SqlUpdate(INSERT_THREAD)
        int insert(@BindRow(VectorColumns.class) ChatThread thread);

        @Override
        @SqlUpdate(UPDATE_THREAD)
        int update(@BindRow(VectorColumns.class) ChatThread thread);

        @Override
        @SqlBatch(TOUCH_THREAD)
        void touch(@BindRow(VectorTouchColumns.class) List<ThreadTouch> touches);

        @Override
        @SqlQuery(ACTIVE_LEAF + " FOR NO KEY UPDATE")
        Optional<String> activeLeafForUpdate(String id);
    }

    /** Binds every column of a thread. */
    class Columns implements BindRow.Binder<ChatThread> {
        @Override
        public void bind(SqlStatement<?> statement, ChatThread thread) {
            statement.bind("id", thread.id())
                    .bind("ownerId", thread.ownerId())
                    .bind("title", thread.title())
                    .bind("runtimeSessionId", thread.runtimeSessionId())
                    .bind("modelId", thread.modelId())
                    .bind("skill", thread.skill())
                    .bind("status", thread.status().name())
                    .bind("createdAt", thread.createdAt().toEpochMilli())
                    .bind("lastMessageAt", thread.lastMessageAt().toEpochMilli())
                    .bind("activeLeafId", thread.activeLeafId())
                    .bind("sessionHeadId", thread.sessionHeadId());
        }
    }

    /** Binds every column of a thread and its title's search vector. */
    final class VectorColumns extends Columns {
        @Override
        public void bind(SqlStatement<?> statement, ChatThread thread) {
            super.bind(statement, thread);
            statement.bind("titleVector", SearchText.vector(SearchText.of(thread.title())));
        }
    }

    /** Binds a touch. */
    class TouchColumns implements BindRow.Binder<ThreadTouch> {
        @Override
        public void bind(SqlStatement<?> statement, ThreadTouch touch) {
            statement.bind("id", touch.threadId())
                    .bind("runtimeSessionId", touch.runtimeSessionId())
                    .bind("lastMessageAt", Rows.millis(touch.lastMessageAt()))
                    .bind("defaultTitle", touch.defaultTitle())
                    .bind("activeLeafId", touch.activeLeafId())
                    .bind("sessionHeadId", touch.sessionHeadId());
        }
    }

    /** Binds a touch and its default title's search vector. */
    final class VectorTouchColumns extends TouchColumns {
        @Override
        public void bind(SqlStatement<?> statement, ThreadTouch touch) {
            super.bind(statement, touch);
            statement.bind("defaultTitleVector", SearchText.vector(SearchText.of(touch.defaultTitle())));
        }
    }

    /** Reads a thread row. */
    final class Mapper implements RowMapper<ChatThread> {
        @Override
        public ChatThread map(ResultSet rs, StatementContext ctx) throws SQLException {
            return new ChatThread(rs.getString("id"), rs.getString("owner_id"), rs.getString("title"),
                    rs.getString("runtime_session_id"), rs.getString("model_id"), rs.getString("skill"),
                    ThreadStatus.valueOf(rs.getString("status")), Rows.instant(rs, "created_at"),
                    Rows.instant(rs, "last_message_at"), rs.getString("active_leaf_id"), rs.getString("session_head_id"));
        }
    }
}
