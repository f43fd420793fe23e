package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.model.Feedback;
import dev.parley.chat.model.FeedbackRating;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.SqlStatement;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.sqlobject.config.RegisterRowMapper;
import org.jdbi.v3.sqlobject.customizer.BindList;
import org.jdbi.v3.sqlobject.statement.SqlQuery;
import org.jdbi.v3.sqlobject.statement.SqlUpdate;

/**
 * The ratings of messages ({@code parley_feedback}, one per message and owner: a new one replaces the
 * last). The same SQL on SQLite and PostgreSQL.
 */
@RegisterRowMapper(FeedbackDao.Mapper.class)
public interface FeedbackDao {
    String UPSERT_FEEDBACK = "INSERT INTO parley_feedback "
            + "(message_id, owner_id, thread_id, run_id, rating, comment, created_at) "
            + "VALUES (:messageId, :ownerId, :threadId, :runId, :rating, :comment, :createdAt) "
            + "ON CONFLICT (message_id, owner_id) DO UPDATE SET thread_id = excluded.thread_id, "
            + "run_id = excluded.run_id, rating = excluded.rating, comment = excluded.comment, "
            + "created_at = excluded.created_at";

    String FIND_FEEDBACK = "SELECT thread_id, run_id, message_id, owner_id, rating, comment, "
            + "created_at FROM parley_feedback WHERE message_id = :messageId AND owner_id = :ownerId";

    /** The feedback on messages, by any owner (the primary key's leading column). */
    String LIST_FEEDBACK = "SELECT thread_id, run_id, message_id, owner_id, rating, comment, "
            + "created_at FROM parley_feedback WHERE message_id IN (<messageIds>)";

    /** Saves a rating, replacing the owner's last one of the message; fails on a foreign key if its thread is gone. */
    @SqlUpdate(UPSERT_FEEDBACK)
    int save(@BindRow(Columns.class) Feedback feedback);

    @SqlQuery(FIND_FEEDBACK)
    Optional<Feedback> find(String messageId, String ownerId);

    @SqlQuery(LIST_FEEDBACK)
    List<Feedback> listOf(@BindList List<String> messageIds);

    /** The feedback given on these messages (long id lists are read in chunks). */
    default List<Feedback> list(Collection<String> messageIds) {
        List<Feedback> found = new ArrayList<>();
        for (List<String> chunk : InLists.chunks(messageIds)) {
            found.addAll(listOf(chunk));
        }
        return found;
    }

    /** Binds every column of a rating. */
    final class Columns implements BindRow.Binder<Feedback> {
        @Override
        public void bind(SqlStatement<?> statement, Feedback feedback) {
            statement.bind("messageId", feedback.messageId())
                    .bind("ownerId", feedback.ownerId())
                    .bind("threadId", feedback.threadId())
                    .bind("runId", feedback.runId())
                    .bind("rating", feedback.rating().name())
                    .bind("comment", feedback.comment())
                    .bind("createdAt", feedback.createdAt().toEpochMilli());
        }
    }

    /** Reads a rating. */
    final class Mapper implements RowMapper<Feedback> {
        @Override
        public Feedback map(ResultSet rs, StatementContext ctx) throws SQLException {
            return new Feedback(rs.getString("thread_id"), rs.getString("run_id"), rs.getString("message_id"),
                    rs.getString("owner_id"), FeedbackRating.valueOf(rs.getString("rating")), rs.getString("comment"),
                    Rows.instant(rs, "created_at"));
        }
    }
}
