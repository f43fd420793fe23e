package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.input.InputKind;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.outbox.OutboxEntry;
import dev.parley.chat.outbox.OutboxEventType;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.SqlStatement;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.sqlobject.config.RegisterRowMapper;
import org.jdbi.v3.sqlobject.customizer.Bind;
import org.jdbi.v3.sqlobject.statement.SqlBatch;
import org.jdbi.v3.sqlobject.statement.SqlQuery;
import org.jdbi.v3.sqlobject.statement.SqlUpdate;

/**
 * The outbox ({@code parley_outbox}, migration V12): entries inserted with their batch, claimed under a lease,
 * then removed, retried or failed by the claim's holder. The same SQL on SQLite and PostgreSQL.
 *
 * <p>A claim reads the due rows no lease holds, then takes each with a conditional UPDATE that checks the same
 * again: of two instances racing for a row (PostgreSQL: the second waits for the first's row lock and then
 * finds the lease taken), one updates it. Instances take the rows in one order (due time, message id,
 * destination), so two claims never wait for each other crosswise. SQLite has one writer at a time.
 */
@RegisterRowMapper(OutboxDao.Mapper.class)
public interface OutboxDao {
    String COLUMNS = "message_id, destination, thread_id, run_id, type, run_status, input_id, input_kind, "
            + "occurred_at, attempts, next_attempt_at";

    /** An entry that exists (same message and destination) is left as it is: a write repeated stores nothing. */
    String INSERT = "INSERT INTO parley_outbox (" + COLUMNS + ") VALUES (:messageId, :destination, :threadId, :runId, "
            + ":type, :status, :inputId, :inputKind, :occurredAt, :attempts, :nextAttemptAt) "
            + "ON CONFLICT (message_id, destination) DO NOTHING";

    String DUE = "failed_at IS NULL AND next_attempt_at <= :now AND (claimed_by IS NULL OR lease_until <= :now)";

    @SqlBatch(INSERT)
    void insert(@BindRow(Columns.class) List<OutboxEntry> entries);

    @SqlQuery("SELECT " + COLUMNS + " FROM parley_outbox WHERE " + DUE
            + " ORDER BY next_attempt_at, message_id, destination LIMIT :limit")
    List<OutboxEntry> findDue(long now, int limit);

    @SqlUpdate("UPDATE parley_outbox SET claimed_by = :instanceId, lease_until = :until "
            + "WHERE message_id = :messageId AND destination = :destination AND " + DUE)
    int claimOne(String messageId, String destination, String instanceId, long now, long until);

    @SqlUpdate("DELETE FROM parley_outbox WHERE message_id = :messageId AND destination = :destination "
            + "AND claimed_by = :instanceId AND failed_at IS NULL")
    int complete(String messageId, String destination, String instanceId);

    @SqlUpdate("UPDATE parley_outbox SET attempts = :attempts, next_attempt_at = :next, claimed_by = NULL, "
            + "lease_until = NULL WHERE message_id = :messageId AND destination = :destination "
            + "AND claimed_by = :instanceId AND failed_at IS NULL")
    int retry(String messageId, String destination, String instanceId, int attempts, long next);

    @SqlUpdate("UPDATE parley_outbox SET attempts = :attempts, failed_at = :at, claimed_by = NULL, lease_until = NULL "
            + "WHERE message_id = :messageId AND destination = :destination AND claimed_by = :instanceId "
            + "AND failed_at IS NULL")
    int fail(String messageId, String destination, String instanceId, int attempts, long at);

    @SqlQuery("SELECT COUNT(*) FROM parley_outbox WHERE failed_at IS NULL")
    long countPending();

    @SqlQuery("SELECT COUNT(*) FROM parley_outbox WHERE failed_at IS NOT NULL")
    long countFailed();

    @SqlUpdate("DELETE FROM parley_outbox WHERE failed_at IS NOT NULL AND failed_at < :before")
    int purgeFailed(@Bind("before") long before);

    /** Claims up to {@code limit} due rows for {@code instanceId} until {@code until}; those it took. */
    default List<OutboxEntry> claim(String instanceId, Instant now, Instant until, int limit) {
        if (limit <= 0) {
            return List.of();
        }
        List<OutboxEntry> claimed = new ArrayList<>();
        for (OutboxEntry entry : findDue(now.toEpochMilli(), limit)) {
            if (claimOne(entry.messageId(), entry.destination(), instanceId, now.toEpochMilli(),
                    until.toEpochMilli()) == 1) {
                claimed.add(entry);
            }
        }
        return claimed;
    }

    /** Binds every column of a new entry. */
    final class Columns implements BindRow.Binder<OutboxEntry> {
        @Override
        public void bind(SqlStatement<?> statement, OutboxEntry entry) {
            statement.bind("messageId", entry.messageId())
                    .bind("destination", entry.destination())
                    .bind("threadId", entry.threadId())
                    .bind("runId", entry.runId())
                    .bind("type", entry.type().name())
                    .bind("status", entry.status().name())
                    .bind("inputId", entry.inputId())
                    .bind("inputKind", entry.inputKind() == null ? null : entry.inputKind().name())
                    .bind("occurredAt", entry.occurredAt().toEpochMilli())
                    .bind("attempts", entry.attempts())
                    .bind("nextAttemptAt", entry.nextAttemptAt().toEpochMilli());
        }
    }

    /** Reads an entry. */
    final class Mapper implements RowMapper<OutboxEntry> {
        @Override
        public OutboxEntry map(ResultSet rs, StatementContext ctx) throws SQLException {
            String kind = rs.getString("input_kind");
            return new OutboxEntry(rs.getString("message_id"), rs.getString("destination"),
                    OutboxEventType.valueOf(rs.getString("type")), rs.getString("thread_id"), rs.getString("run_id"),
                    RunStatus.valueOf(rs.getString("run_status")), rs.getString("input_id"),
                    kind == null ? null : InputKind.valueOf(kind), Rows.instant(rs, "occurred_at"),
                    rs.getInt("attempts"), Rows.instant(rs, "next_attempt_at"));
        }
    }
}
