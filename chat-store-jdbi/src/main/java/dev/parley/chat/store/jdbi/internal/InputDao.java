package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputRequest;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.store.AnswerOutcome;
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
 * What runs wait on: pending inputs ({@code parley_inputs}, keyed by {@code (run_id, input_id)}, the request
 * and answer as chat-core's JSON) with their transitions — answer, reopen, expire or cancel, each one
 * conditional statement so that of racing calls exactly one wins — and the approvals a person gave for a
 * whole thread ({@code parley_thread_approvals}). The same SQL on SQLite and PostgreSQL.
 */
@RegisterRowMapper(InputDao.Mapper.class)
public interface InputDao {
    String COLUMNS = "run_id, input_id, message_id, kind, request, deadline, resume_token, state, answer, "
            + "created_at, resolved_at";

    /** Inserts an input; an existing {@code (run_id, input_id)} is left as it is. */
    String INSERT_INPUT = "INSERT INTO parley_inputs (" + COLUMNS + ") VALUES "
            + "(:runId, :inputId, :messageId, :kind, :request, :deadline, :resumeToken, :state, :answer, :createdAt, "
            + ":resolvedAt) ON CONFLICT (run_id, input_id) DO NOTHING";

    String FIND_INPUT = "SELECT " + COLUMNS + " FROM parley_inputs WHERE run_id = :runId AND input_id = :inputId";

    /** The input's run has ended (or is gone): a condition on parley_inputs' row. */
    String RUN_ENDED = "NOT EXISTS (SELECT 1 FROM parley_runs r WHERE r.id = parley_inputs.run_id "
            + "AND r.status IN ('QUEUED', 'RUNNING', 'WAITING_FOR_INPUT'))";

    String PENDING_INPUTS = "SELECT " + COLUMNS + " FROM parley_inputs "
            + "WHERE run_id = :runId AND state = 'PENDING' ORDER BY save_order";

    /** Answers an input only while it is pending: of racing answers, one updates a row. */
    String ANSWER_INPUT = "UPDATE parley_inputs SET state = 'ANSWERED', answer = :answer, resolved_at = :resolvedAt "
            + "WHERE run_id = :runId AND input_id = :inputId AND state = 'PENDING'";

    /** Takes an answer back: PENDING again, or CANCELLED when the run has ended (it waits for nothing). */
    String REOPEN_INPUT = "UPDATE parley_inputs SET "
            + "state = CASE WHEN " + RUN_ENDED + " THEN 'CANCELLED' ELSE 'PENDING' END, answer = NULL, "
            + "resolved_at = CASE WHEN " + RUN_ENDED + " THEN resolved_at ELSE NULL END "
            + "WHERE run_id = :runId AND input_id = :inputId AND state = 'ANSWERED'";

    /** Resolves a pending input without an answer (EXPIRED or CANCELLED); of racing calls one updates the row. */
    String CLOSE_INPUT = "UPDATE parley_inputs SET state = :state, resolved_at = :resolvedAt "
            + "WHERE run_id = :runId AND input_id = :inputId AND state = 'PENDING'";

    String CANCEL_PENDING_INPUTS = "UPDATE parley_inputs SET state = 'CANCELLED', resolved_at = :resolvedAt "
            + "WHERE run_id = :runId AND state = 'PENDING'";

    /**
     * Remembers an approval for a thread; a repeat changes nothing. A thread that does not exist fails the
     * foreign key (migration V7).
     */
    String REMEMBER_APPROVAL = "INSERT INTO parley_thread_approvals (thread_id, tool_name, approved_at) "
            + "VALUES (:threadId, :toolName, :approvedAt) ON CONFLICT (thread_id, tool_name) DO NOTHING";

    String COUNT_APPROVALS = "SELECT COUNT(*) FROM parley_thread_approvals "
            + "WHERE thread_id = :threadId AND tool_name = :toolName";

    /** Inserts inputs (one JDBC batch); the batch holds each key once. */
    @SqlBatch(INSERT_INPUT)
    void insert(@BindRow(Columns.class) List<PendingInput> inputs);

    @SqlQuery(FIND_INPUT)
    Optional<PendingInput> find(String runId, String inputId);

    @SqlQuery(PENDING_INPUTS)
    List<PendingInput> pending(String runId);

    @SqlUpdate(ANSWER_INPUT)
    int answerIfPending(String runId, String inputId, String answer, long resolvedAt);

    /**
     * Answers a pending input in one conditional statement, so that of racing answers exactly one is
     * ACCEPTED; a later one is REPLAYED if it is the same answer, else a CONFLICT.
     */
    default AnswerOutcome answer(String runId, String inputId, InputAnswer answer, Instant at) {
        if (answerIfPending(runId, inputId, ChatJson.shared().write(answer), at.toEpochMilli()) == 1) {
            return AnswerOutcome.ACCEPTED;
        }
        Optional<PendingInput> stored = find(runId, inputId);
        if (stored.isEmpty()) {
            return AnswerOutcome.NOT_FOUND;
        }
        PendingInput input = stored.get();
        return input.state() == InputState.ANSWERED && answer.equals(input.answer())
                ? AnswerOutcome.REPLAYED : AnswerOutcome.CONFLICT;
    }

    /** Makes an answered input pending again; 0 if it was not answered. */
    @SqlUpdate(REOPEN_INPUT)
    int reopen(String runId, String inputId);

    /** Resolves a pending input EXPIRED or CANCELLED; 1 if it was pending, else 0. */
    @SqlUpdate(CLOSE_INPUT)
    int close(String runId, String inputId, String state, long resolvedAt);

    /** Cancels a run's pending inputs; how many there were. */
    @SqlUpdate(CANCEL_PENDING_INPUTS)
    int cancelPending(String runId, long resolvedAt);

    @SqlUpdate(REMEMBER_APPROVAL)
    int rememberApproval(String threadId, String toolName, long approvedAt);

    @SqlQuery(COUNT_APPROVALS)
    long countApprovals(String threadId, String toolName);

    /** Binds every column of an input. */
    final class Columns implements BindRow.Binder<PendingInput> {
        @Override
        public void bind(SqlStatement<?> statement, PendingInput input) {
            ChatJson json = ChatJson.shared();
            statement.bind("runId", input.runId())
                    .bind("inputId", input.inputId())
                    .bind("messageId", input.messageId())
                    .bind("kind", input.kind().wireName())
                    .bind("request", json.write(input.request()))
                    .bind("deadline", Rows.millis(input.deadline()))
                    .bind("resumeToken", input.resumeToken())
                    .bind("state", input.state().name())
                    .bind("answer", input.answer() == null ? null : json.write(input.answer()))
                    .bind("createdAt", input.createdAt().toEpochMilli())
                    .bind("resolvedAt", Rows.millis(input.resolvedAt()));
        }
    }

    /** Reads an input row. */
    final class Mapper implements RowMapper<PendingInput> {
        @Override
        public PendingInput map(ResultSet rs, StatementContext ctx) throws SQLException {
            ChatJson json = ChatJson.shared();
            String answer = rs.getString("answer");
            return new PendingInput(rs.getString("run_id"), rs.getString("input_id"), rs.getString("message_id"),
                    json.read(rs.getString("request"), InputRequest.class), Rows.nullableInstant(rs, "deadline"),
                    rs.getString("resume_token"), InputState.valueOf(rs.getString("state")),
                    answer == null ? null : json.read(answer, InputAnswer.class), Rows.instant(rs, "created_at"),
                    Rows.nullableInstant(rs, "resolved_at"));
        }
    }
}
