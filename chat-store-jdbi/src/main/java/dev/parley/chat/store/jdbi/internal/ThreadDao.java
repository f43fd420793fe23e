package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.store.ThreadCursor;
import dev.parley.chat.store.ThreadTouch;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.SqlStatement;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.sqlobject.config.RegisterRowMapper;
import org.jdbi.v3.sqlobject.statement.SqlBatch;
import org.jdbi.v3.sqlobject.statement.SqlQuery;
import org.jdbi.v3.sqlobject.statement.SqlUpdate;
import org.jspecify.annotations.Nullable;

/**
 * The threads ({@code parley_threads}): creating, reading, listing an owner's threads page by page, renaming
 * and the engine's touches. Deleting a thread removes its row here; what goes with it is each DAO's
 * {@code deleteOfThread}. The same SQL on SQLite and PostgreSQL.
 */
@RegisterRowMapper(ThreadDao.Mapper.class)
public interface ThreadDao {
    String COLUMNS = "id, owner_id, title, runtime_session_id, model_id, skill, status, created_at, last_message_at";

    String INSERT_THREAD = "INSERT INTO parley_threads (" + COLUMNS + ") "
            + "VALUES (:id, :ownerId, :title, :runtimeSessionId, :modelId, :skill, :status, :createdAt, :lastMessageAt) "
            + "ON CONFLICT (id) DO NOTHING";

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

    String UPDATE_THREAD = "UPDATE parley_threads "
            + "SET title = :title, model_id = :modelId, skill = :skill, status = :status WHERE id = :id";

    String TOUCH_THREAD = "UPDATE parley_threads SET "
            + "runtime_session_id = COALESCE(:runtimeSessionId, runtime_session_id), "
            + "last_message_at = CASE WHEN :lastMessageAt > last_message_at THEN :lastMessageAt ELSE last_message_at END, "
            + "title = COALESCE(title, :defaultTitle) "
            + "WHERE id = :id";

    String DELETE_THREAD = "DELETE FROM parley_threads WHERE id = :threadId";

    /** Inserts a thread unless its id exists; 0 if it did. */
    @SqlUpdate(INSERT_THREAD)
    int insert(@BindRow(Columns.class) ChatThread thread);

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

    /** Sets the fields a caller may change; 0 if there is no such thread. */
    @SqlUpdate(UPDATE_THREAD)
    int update(@BindRow(Columns.class) ChatThread thread);

    /** Applies the engine's touches (one JDBC batch). */
    @SqlBatch(TOUCH_THREAD)
    void touch(@BindRow(TouchColumns.class) List<ThreadTouch> touches);

    /** Deletes the thread's row; 0 if there was none. */
    @SqlUpdate(DELETE_THREAD)
    int delete(String threadId);

    /** Binds every column of a thread. */
    final class Columns implements BindRow.Binder<ChatThread> {
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
                    .bind("lastMessageAt", thread.lastMessageAt().toEpochMilli());
        }
    }

    /** Binds a touch. */
    final class TouchColumns implements BindRow.Binder<ThreadTouch> {
        @Override
        public void bind(SqlStatement<?> statement, ThreadTouch touch) {
            statement.bind("id", touch.threadId())
                    .bind("runtimeSessionId", touch.runtimeSessionId())
                    .bind("lastMessageAt", Rows.millis(touch.lastMessageAt()))
                    .bind("defaultTitle", touch.defaultTitle());
        }
    }

    /** Reads a thread row. */
    final class Mapper implements RowMapper<ChatThread> {
        @Override
        public ChatThread map(ResultSet rs, StatementContext ctx) throws SQLException {
            return new ChatThread(rs.getString("id"), rs.getString("owner_id"), rs.getString("title"),
                    rs.getString("runtime_session_id"), rs.getString("model_id"), rs.getString("skill"),
                    ThreadStatus.valueOf(rs.getString("status")), Rows.instant(rs, "created_at"),
                    Rows.instant(rs, "last_message_at"));
        }
    }
}
