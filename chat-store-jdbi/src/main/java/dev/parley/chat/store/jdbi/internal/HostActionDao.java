package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.store.HostActionRecord;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.util.Optional;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.sqlobject.config.RegisterRowMapper;
import org.jdbi.v3.sqlobject.statement.SqlQuery;
import org.jdbi.v3.sqlobject.statement.SqlUpdate;

/**
 * The executions of host actions ({@code parley_host_actions}, keyed by {@code (run_id, execution_id)}):
 * a claim that exactly one caller wins, and the first result. The same SQL on SQLite and PostgreSQL.
 */
@RegisterRowMapper(HostActionDao.Mapper.class)
public interface HostActionDao {
    /** Creates an execution unless it exists: of racing callers, one inserts a row. */
    String CLAIM_HOST_ACTION = "INSERT INTO parley_host_actions "
            + "(run_id, execution_id, name, arguments, error, claimed_at) "
            + "VALUES (:runId, :executionId, :name, :arguments, FALSE, :claimedAt) "
            + "ON CONFLICT (run_id, execution_id) DO NOTHING";

    String FIND_HOST_ACTION = "SELECT run_id, execution_id, name, arguments, result, error, "
            + "claimed_at, completed_at FROM parley_host_actions WHERE run_id = :runId AND execution_id = :executionId";

    /** Records the first result of an execution; a later one is ignored. */
    String COMPLETE_HOST_ACTION = "UPDATE parley_host_actions "
            + "SET result = :result, error = :error, completed_at = :completedAt "
            + "WHERE run_id = :runId AND execution_id = :executionId AND completed_at IS NULL";

    @SqlUpdate(CLAIM_HOST_ACTION)
    int insertUnlessExists(String runId, String executionId, String name, String arguments, long claimedAt);

    /** A stored execution; it existed already, so it was not claimed now. */
    @SqlQuery(FIND_HOST_ACTION)
    Optional<HostActionRecord> find(String runId, String executionId);

    /** Claims an execution: the caller that inserts it runs the handler; every other one gets what is stored. */
    default HostActionRecord claim(String runId, String executionId, String name, String arguments, Instant at) {
        if (insertUnlessExists(runId, executionId, name, arguments, at.toEpochMilli()) == 1) {
            return new HostActionRecord(runId, executionId, name, arguments, true, null, false, at, null);
        }
        return find(runId, executionId).orElseThrow(() -> new ChatException(ErrorCode.STORE_FAILURE,
                "the host action execution was neither inserted nor found (deleted meanwhile?)"));
    }

    /** Records a claimed execution's result; 0 if it had one (or is unknown). */
    @SqlUpdate(COMPLETE_HOST_ACTION)
    int complete(String runId, String executionId, String result, boolean error, long completedAt);

    /** Reads a stored execution (not claimed now). */
    final class Mapper implements RowMapper<HostActionRecord> {
        @Override
        public HostActionRecord map(ResultSet rs, StatementContext ctx) throws SQLException {
            return new HostActionRecord(rs.getString("run_id"), rs.getString("execution_id"), rs.getString("name"),
                    rs.getString("arguments"), false, rs.getString("result"), rs.getBoolean("error"),
                    Rows.instant(rs, "claimed_at"), Rows.nullableInstant(rs, "completed_at"));
        }
    }
}
