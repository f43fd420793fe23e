package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.store.StoreBatch;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jdbi.v3.core.mapper.RowMapper;
import org.jdbi.v3.core.statement.SqlStatement;
import org.jdbi.v3.core.statement.StatementContext;
import org.jdbi.v3.sqlobject.config.RegisterRowMapper;
import org.jdbi.v3.sqlobject.statement.SqlBatch;
import org.jdbi.v3.sqlobject.statement.SqlQuery;
import org.jdbi.v3.sqlobject.statement.SqlUpdate;

/**
 * The run event log ({@code parley_run_events}, keyed by {@code (run_id, seq)}) and the seq reservations
 * ({@code parley_seq_reservations}): appends, replay pages, a run's last seq, and reservations that only
 * rise. SQLite appends a batch of events as a JDBC batch ({@link Sqlite}), PostgreSQL as one statement over
 * arrays ({@link Postgres}); the store uses its database's interface ({@link #of}). The rest is shared.
 */
@RegisterRowMapper(EventDao.Stored.Mapper.class)
public interface EventDao {
    /** Hot: a replay page after a cursor (a range of the primary key). */
    String READ_EVENTS = "SELECT seq, created_at, payload FROM parley_run_events "
            + "WHERE run_id = :runId AND seq > :afterSeq ORDER BY seq LIMIT :limit";

    /** Hot: the newest stored seq of a run (one primary-key probe). */
    String LAST_SEQ = "SELECT seq FROM parley_run_events WHERE run_id = :runId ORDER BY seq DESC LIMIT 1";

    /** Raises a run's seq reservation, never lowers it. */
    String RESERVE_SEQ = "INSERT INTO parley_seq_reservations (run_id, reserved_seq) "
            + "VALUES (:runId, :upTo) ON CONFLICT (run_id) DO UPDATE SET reserved_seq = excluded.reserved_seq "
            + "WHERE excluded.reserved_seq > parley_seq_reservations.reserved_seq";

    String RESERVED_SEQ = "SELECT reserved_seq FROM parley_seq_reservations WHERE run_id = :runId";

    String DELETE_EVENTS_OF_RUN = "DELETE FROM parley_run_events WHERE run_id = :runId";

    String DELETE_EVENTS_OF_THREAD = "DELETE FROM parley_run_events WHERE run_id IN " + RunDao.RUNS_OF_THREAD;

    String DELETE_RESERVATIONS_OF_THREAD = "DELETE FROM parley_seq_reservations WHERE run_id IN "
            + RunDao.RUNS_OF_THREAD;

    /** The interface to attach on a database. */
    static Class<? extends EventDao> of(Dialect dialect) {
        return switch (dialect) {
            case SQLITE -> Sqlite.class;
            case POSTGRESQL -> Postgres.class;
        };
    }

    /** An event with its JSON payload, written before the write lock is taken. */
    record Encoded(RunEvent event, String payload) {
    }

    /**
     * Events with their JSON written, each {@code (runId, seq)} once (the first given is kept): no statement
     * then touches a row twice, whatever batching the driver does.
     */
    static List<Encoded> encode(List<RunEvent> events) {
        ChatJson json = ChatJson.shared();
        Map<String, Map<Long, RunEvent>> unique = new LinkedHashMap<>();
        List<Encoded> encoded = new ArrayList<>(events.size());
        for (RunEvent event : events) {
            if (unique.computeIfAbsent(event.runId(), k -> new HashMap<>()).putIfAbsent(event.seq(), event) == null) {
                encoded.add(new Encoded(event, json.write(event.event())));
            }
        }
        return encoded;
    }

    /** Appends events; an existing {@code (run_id, seq)} is left as it is. The batch holds each key once. */
    void insert(List<Encoded> events);

    @SqlQuery(READ_EVENTS)
    List<Stored> read(String runId, long afterSeq, int limit);

    /** The newest stored seq of a run, if it has events. */
    @SqlQuery(LAST_SEQ)
    Optional<Long> lastSeq(String runId);

    /** Raises a run's seq reservation to {@code upTo}; 0 if it was as high already. */
    @SqlUpdate(RESERVE_SEQ)
    int reserveSeq(String runId, long upTo);

    /** Raises seq reservations, one statement each. */
    default void reserveSeqs(List<StoreBatch.SeqReservation> reservations) {
        for (StoreBatch.SeqReservation reservation : reservations) {
            reserveSeq(reservation.runId(), reservation.upTo());
        }
    }

    @SqlQuery(RESERVED_SEQ)
    Optional<Long> reservedSeq(String runId);

    /** Deletes a run's whole event log (its seq reservation stays). */
    @SqlUpdate(DELETE_EVENTS_OF_RUN)
    void deleteEventsOfRun(String runId);

    /** Deletes the events and seq reservations of a thread's runs. */
    @SqlUpdate(DELETE_EVENTS_OF_THREAD)
    void deleteEventsOfThread(String threadId);

    @SqlUpdate(DELETE_RESERVATIONS_OF_THREAD)
    void deleteReservationsOfThread(String threadId);

    /** Stored events of a run, in the order given; one that cannot be read is a store failure. */
    static List<RunEvent> decode(String runId, List<Stored> rows) {
        ChatJson json = ChatJson.shared();
        List<RunEvent> events = new ArrayList<>(rows.size());
        for (Stored row : rows) {
            AgentStreamEvent event;
            try {
                event = json.readEvent(row.payload());
            } catch (ChatException e) {
                throw new ChatException(ErrorCode.STORE_FAILURE, "a stored run event cannot be read", e);
            }
            events.add(new RunEvent(runId, row.seq(), row.createdAt(), event));
        }
        return events;
    }

    /** SQLite: a batch of events is one JDBC batch (a prepared statement run once per row, in process). */
    interface Sqlite extends EventDao {
        String INSERT_EVENT = "INSERT INTO parley_run_events (run_id, seq, created_at, type, payload) "
                + "VALUES (:runId, :seq, :createdAt, :type, :payload) ON CONFLICT (run_id, seq) DO NOTHING";

        @Override
        @SqlBatch(INSERT_EVENT)
        void insert(@BindRow(Columns.class) List<Encoded> events);
    }

    /**
     * PostgreSQL: a batch of events is one statement, one array per column, in the same order. PostgreSQL
     * executes a JDBC batch row by row, a round trip each, about half as fast (measured by the bench,
     * section 2).
     */
    interface Postgres extends EventDao {
        String INSERT_EVENTS_UNNEST = "INSERT INTO parley_run_events (run_id, seq, created_at, type, payload) "
                + "SELECT * FROM unnest(CAST(:runIds AS text[]), CAST(:seqs AS bigint[]), CAST(:createdAts AS bigint[]), "
                + "CAST(:types AS text[]), CAST(:payloads AS text[])) ON CONFLICT (run_id, seq) DO NOTHING";

        /** Events per array insert: bounds one statement's size when the writer catches up a long backlog. */
        int EVENTS_PER_STATEMENT = 4096;

        @SqlUpdate(INSERT_EVENTS_UNNEST)
        void insertArrays(String[] runIds, Long[] seqs, Long[] createdAts, String[] types, String[] payloads);

        /**
         * The arrays bypass the store's text argument, so their plain-text elements are made storable here
         * (PostgreSQL's text cannot hold U+0000); the JSON payload never holds a raw NUL.
         */
        @Override
        default void insert(List<Encoded> events) {
            for (int from = 0; from < events.size(); from += EVENTS_PER_STATEMENT) {
                List<Encoded> chunk = events.subList(from, Math.min(events.size(), from + EVENTS_PER_STATEMENT));
                int n = chunk.size();
                String[] runIds = new String[n];
                Long[] seqs = new Long[n];
                Long[] createdAts = new Long[n];
                String[] types = new String[n];
                String[] payloads = new String[n];
                for (int i = 0; i < n; i++) {
                    RunEvent event = chunk.get(i).event();
                    runIds[i] = Dialect.POSTGRESQL.storableText(event.runId());
                    seqs[i] = event.seq();
                    createdAts[i] = event.timestamp();
                    types[i] = Dialect.POSTGRESQL.storableText(event.type());
                    payloads[i] = chunk.get(i).payload();
                }
                insertArrays(runIds, seqs, createdAts, types, payloads);
            }
        }
    }

    /** Binds an event's columns. */
    final class Columns implements BindRow.Binder<Encoded> {
        @Override
        public void bind(SqlStatement<?> statement, Encoded encoded) {
            RunEvent event = encoded.event();
            statement.bind("runId", event.runId())
                    .bind("seq", event.seq())
                    .bind("createdAt", event.timestamp())
                    .bind("type", event.type())
                    .bind("payload", encoded.payload());
        }
    }

    /** A stored event of a known run. */
    record Stored(long seq, long createdAt, String payload) {
        public static final class Mapper implements RowMapper<Stored> {
            @Override
            public Stored map(ResultSet rs, StatementContext ctx) throws SQLException {
                return new Stored(rs.getLong("seq"), rs.getLong("created_at"), rs.getString("payload"));
            }
        }
    }
}
