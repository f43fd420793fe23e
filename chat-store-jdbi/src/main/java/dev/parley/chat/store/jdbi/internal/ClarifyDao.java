package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.store.AnswerOutcome;
import dev.parley.chat.store.ClarifyState;
import dev.parley.chat.store.PendingClarify;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.SqlStatement;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.sqlobject.config.RegisterRowMapper;
import org.jdbi.v3.sqlobject.statement.SqlBatch;
import org.jdbi.v3.sqlobject.statement.SqlQuery;
import org.jdbi.v3.sqlobject.statement.SqlUpdate;

/**
 * The questions a run waits on ({@code parley_clarifies}, keyed by {@code (run_id, clarify_id)}): the
 * batch's inserts, the pending ones of a run, and the answer, reopen and cancel transitions. Self-contained
 * (no other DAO reads this table), so the coming table of pending inputs can replace it whole. The same SQL
 * on SQLite and PostgreSQL.
 */
@RegisterRowMapper(ClarifyDao.Mapper.class)
public interface ClarifyDao {
    String COLUMNS = "run_id, clarify_id, message_id, question, choices, multi_select, "
            + "resume_token, state, answer, created_at, answered_at";

    /** Inserts a clarify; an existing {@code (run_id, clarify_id)} is left as it is. */
    String INSERT_CLARIFY = "INSERT INTO parley_clarifies (" + COLUMNS + ") VALUES "
            + "(:runId, :clarifyId, :messageId, :question, :choices, :multiSelect, :resumeToken, :state, :answer, "
            + ":createdAt, :answeredAt) ON CONFLICT (run_id, clarify_id) DO NOTHING";

    String FIND_CLARIFY = "SELECT " + COLUMNS + " FROM parley_clarifies WHERE run_id = :runId AND clarify_id = :clarifyId";

    String PENDING_CLARIFIES = "SELECT " + COLUMNS + " FROM parley_clarifies "
            + "WHERE run_id = :runId AND state = 'PENDING' ORDER BY save_order";

    /** Answers a clarify only while it is pending: of racing answers, one updates a row. */
    String ANSWER_CLARIFY = "UPDATE parley_clarifies "
            + "SET state = 'ANSWERED', answer = :answer, answered_at = :answeredAt "
            + "WHERE run_id = :runId AND clarify_id = :clarifyId AND state = 'PENDING'";

    String REOPEN_CLARIFY = "UPDATE parley_clarifies "
            + "SET state = 'PENDING', answer = '[]', answered_at = NULL "
            + "WHERE run_id = :runId AND clarify_id = :clarifyId AND state = 'ANSWERED'";

    String CANCEL_PENDING_CLARIFIES = "UPDATE parley_clarifies SET state = 'CANCELLED' "
            + "WHERE run_id = :runId AND state = 'PENDING'";

    String DELETE_OF_THREAD = "DELETE FROM parley_clarifies WHERE run_id IN " + RunDao.RUNS_OF_THREAD;

    /** Inserts clarifies (one JDBC batch); the batch holds each key once. */
    @SqlBatch(INSERT_CLARIFY)
    void insert(@BindRow(Columns.class) List<PendingClarify> clarifies);

    @SqlQuery(FIND_CLARIFY)
    Optional<PendingClarify> find(String runId, String clarifyId);

    @SqlQuery(PENDING_CLARIFIES)
    List<PendingClarify> pending(String runId);

    @SqlUpdate(ANSWER_CLARIFY)
    int answerIfPending(String runId, String clarifyId, String answer, long answeredAt);

    /**
     * Answers a pending clarify in one conditional statement, so that of racing answers exactly one is
     * ACCEPTED; a later one is REPLAYED if it is the same answer, else a CONFLICT.
     */
    default AnswerOutcome answer(String runId, String clarifyId, List<String> answer, Instant at) {
        if (answerIfPending(runId, clarifyId, Rows.json(answer), at.toEpochMilli()) == 1) {
            return AnswerOutcome.ACCEPTED;
        }
        Optional<PendingClarify> stored = find(runId, clarifyId);
        if (stored.isEmpty()) {
            return AnswerOutcome.NOT_FOUND;
        }
        PendingClarify clarify = stored.get();
        return clarify.state() == ClarifyState.ANSWERED && clarify.answer().equals(answer)
                ? AnswerOutcome.REPLAYED : AnswerOutcome.CONFLICT;
    }

    /** Makes an answered clarify pending again; 0 if it was not answered. */
    @SqlUpdate(REOPEN_CLARIFY)
    int reopen(String runId, String clarifyId);

    /** Cancels a run's pending clarifies; how many there were. */
    @SqlUpdate(CANCEL_PENDING_CLARIFIES)
    int cancelPending(String runId);

    /** Deletes the clarifies of a thread's runs. */
    @SqlUpdate(DELETE_OF_THREAD)
    void deleteOfThread(String threadId);

    /** Binds every column of a clarify. */
    final class Columns implements BindRow.Binder<PendingClarify> {
        @Override
        public void bind(SqlStatement<?> statement, PendingClarify clarify) {
            statement.bind("runId", clarify.runId())
                    .bind("clarifyId", clarify.clarifyId())
                    .bind("messageId", clarify.messageId())
                    .bind("question", clarify.question())
                    .bind("choices", Rows.json(clarify.choices()))
                    .bind("multiSelect", clarify.multiSelect())
                    .bind("resumeToken", clarify.resumeToken())
                    .bind("state", clarify.state().name())
                    .bind("answer", Rows.json(clarify.answer()))
                    .bind("createdAt", clarify.createdAt().toEpochMilli())
                    .bind("answeredAt", Rows.millis(clarify.answeredAt()));
        }
    }

    /** Reads a clarify row. */
    final class Mapper implements RowMapper<PendingClarify> {
        @Override
        public PendingClarify map(ResultSet rs, StatementContext ctx) throws SQLException {
            return new PendingClarify(rs.getString("run_id"), rs.getString("clarify_id"), rs.getString("message_id"),
                    rs.getString("question"), Rows.strings(rs.getString("choices")), rs.getBoolean("multi_select"),
                    rs.getString("resume_token"), ClarifyState.valueOf(rs.getString("state")),
                    Rows.strings(rs.getString("answer")), Rows.instant(rs, "created_at"),
                    Rows.nullableInstant(rs, "answered_at"));
        }
    }
}
