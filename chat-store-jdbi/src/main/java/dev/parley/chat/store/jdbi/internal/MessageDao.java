package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.Message;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
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
 * The messages ({@code parley_messages}): each stored as its JSON body beside the columns the reads select
 * and order by ({@code save_order}, the place its first save gave it). Owns the upsert, the top-level
 * pages of a thread, the steps of runs and the answer variants of parents. The same SQL on SQLite and
 * PostgreSQL. Reads return bodies; {@link #decode} turns them into messages, off the connection.
 */
@RegisterRowMapper(MessageDao.OrderedBody.Mapper.class)
@RegisterRowMapper(MessageDao.Variant.Mapper.class)
public interface MessageDao {
    /** Inserts a message, or replaces it keeping its {@code save_order} (its place in the thread). */
    String UPSERT_MESSAGE = "INSERT INTO parley_messages "
            + "(id, thread_id, run_id, parent_message_id, kind, top_level, status, created_at, body) "
            + "VALUES (:id, :threadId, :runId, :parentMessageId, :kind, :topLevel, :status, :createdAt, :body) "
            + "ON CONFLICT (id) DO UPDATE SET thread_id = excluded.thread_id, run_id = excluded.run_id, "
            + "parent_message_id = excluded.parent_message_id, kind = excluded.kind, top_level = excluded.top_level, "
            + "status = excluded.status, created_at = excluded.created_at, body = excluded.body";

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

    /** Hot: the steps of the runs on a page (with their order, to merge the chunks of a long id list). */
    String STEP_MESSAGES = "SELECT save_order, body FROM parley_messages "
            + "WHERE run_id IN (<runIds>) AND top_level = FALSE ORDER BY save_order";

    /** Hot: the answers sharing a parent, for the variant arrows. */
    String VARIANT_IDS = "SELECT parent_message_id, id FROM parley_messages "
            + "WHERE parent_message_id IN (<parentIds>) AND kind = 'assistant' ORDER BY save_order";

    String DELETE_OF_THREAD = "DELETE FROM parley_messages WHERE thread_id = :threadId";

    /** A message with its JSON body, written before the write lock is taken. */
    record Encoded(Message message, String body) {
    }

    /** Upserts messages (one JDBC batch); the batch holds each id once. */
    @SqlBatch(UPSERT_MESSAGE)
    void upsert(@BindRow(Columns.class) List<Encoded> messages);

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

    @SqlQuery(STEP_MESSAGES)
    List<OrderedBody> steps(@BindList List<String> runIds);

    /** The steps of runs, in save order (long id lists are read in chunks and merged). */
    default List<String> stepBodies(Collection<String> runIds) {
        List<OrderedBody> rows = new ArrayList<>();
        List<List<String>> chunks = InLists.chunks(runIds);
        for (List<String> chunk : chunks) {
            rows.addAll(steps(chunk));
        }
        if (chunks.size() > 1) {
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

    /** Deletes a thread's messages. */
    @SqlUpdate(DELETE_OF_THREAD)
    void deleteOfThread(String threadId);

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

    /** Binds a message's columns. */
    final class Columns implements BindRow.Binder<Encoded> {
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
                    .bind("body", encoded.body());
        }
    }

    /** A step's body with its place. */
    record OrderedBody(long saveOrder, String body) {
        public static final class Mapper implements RowMapper<OrderedBody> {
            @Override
            public OrderedBody map(ResultSet rs, StatementContext ctx) throws SQLException {
                return new OrderedBody(rs.getLong("save_order"), rs.getString("body"));
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
