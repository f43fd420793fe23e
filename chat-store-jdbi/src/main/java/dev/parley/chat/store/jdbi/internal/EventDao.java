package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.store.StoreBatch;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.HashMap;
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
import org.jspecify.annotations.Nullable;

/**
 * The run event log ({@code parley_run_events}, keyed by {@code (run_id, seq)}, a row holding one event or
 * a span of deltas that ends at its {@code seq}: see {@link EventRows}), the seq reservations
 * ({@code parley_seq_reservations}) and the resume points ({@code parley_resume_points}): appends, replay
 * pages, a run's last seq, reservations that only rise, and the one resume point per run that the batch
 * storing its events replaces. SQLite appends a batch of rows as a JDBC batch ({@link Sqlite}), PostgreSQL as one statement over
 * arrays ({@link Postgres}); the store uses its database's interface ({@link #of}). The rest is shared.
 */
@RegisterRowMapper(EventDao.Stored.Mapper.class)
@RegisterRowMapper(EventDao.Span.Mapper.class)
@RegisterRowMapper(EventDao.RunLogEnd.Mapper.class)
@RegisterRowMapper(EventDao.ResumePointMapper.class)
public interface EventDao {
    /**
     * The rows of a run with key in {@code (afterSeq, bound]}, and the first row after {@code bound} (which
     * may hold seqs up to {@code bound}): one primary-key range, its end found by a probe of the key.
     */
    String ROWS_AFTER = "FROM parley_run_events WHERE run_id = :runId AND seq > :afterSeq AND seq <= COALESCE("
            + "(SELECT seq FROM parley_run_events WHERE run_id = :runId AND seq > :bound ORDER BY seq LIMIT 1), :bound) "
            + "ORDER BY seq";

    /** Hot: a replay page after a cursor (a range of the primary key, see {@link #ROWS_AFTER}). */
    String READ_EVENTS = "SELECT seq, first_seq, created_at, type, payload " + ROWS_AFTER;

    /** The seqs the rows of {@link #ROWS_AFTER} hold. */
    String READ_SPANS = "SELECT seq, first_seq " + ROWS_AFTER;

    /** Hot: the newest stored seq of a run (one primary-key probe: a row's key is its last seq). */
    String LAST_SEQ = "SELECT seq FROM parley_run_events WHERE run_id = :runId ORDER BY seq DESC LIMIT 1";

    /** Raises a run's seq reservation, never lowers it. */
    String RESERVE_SEQ = "INSERT INTO parley_seq_reservations (run_id, reserved_seq) "
            + "VALUES (:runId, :upTo) ON CONFLICT (run_id) DO UPDATE SET reserved_seq = excluded.reserved_seq "
            + "WHERE excluded.reserved_seq > parley_seq_reservations.reserved_seq";

    String RESERVED_SEQ = "SELECT reserved_seq FROM parley_seq_reservations WHERE run_id = :runId";

    /** Replaces a run's resume point. */
    String SAVE_RESUME_POINT = "INSERT INTO parley_resume_points (run_id, token, skip, followable) "
            + "VALUES (:runId, :token, :skip, :followable) ON CONFLICT (run_id) DO UPDATE SET token = excluded.token, "
            + "skip = excluded.skip, followable = excluded.followable";

    String RESUME_POINT = "SELECT run_id, token, skip, followable FROM parley_resume_points WHERE run_id = :runId";

    String DELETE_EVENTS_OF_RUN = "DELETE FROM parley_run_events WHERE run_id = :runId";

    /** The interface to attach on a database. */
    static Class<? extends EventDao> of(Dialect dialect) {
        return switch (dialect) {
            case SQLITE -> Sqlite.class;
            case POSTGRESQL -> Postgres.class;
        };
    }

    /** Appends rows; an existing {@code (run_id, seq)} is left as it is. The batch holds each key once. */
    void insert(List<EventRows.Row> rows);

    @SqlQuery(READ_EVENTS)
    List<Stored> read(String runId, long afterSeq, long bound);

    @SqlQuery(READ_SPANS)
    List<Span> spans(String runId, long afterSeq, long bound);

    /**
     * The rows holding a run's first {@code limit} events after {@code afterSeq} (rows in key order; the
     * first may also hold seqs up to {@code afterSeq}, the last seqs beyond the page). A read of
     * {@code limit} seqs' worth of keys and one row more holds the page unless the run's seqs have gaps
     * there (a compacted log, seqs resumed above a reservation); then it reads on from its last row.
     */
    default List<Stored> readPage(String runId, long afterSeq, int limit) {
        List<Stored> page = new ArrayList<>();
        long cursor = afterSeq;
        long wanted = limit;
        while (true) {
            long bound = cursor > Long.MAX_VALUE - wanted ? Long.MAX_VALUE : cursor + wanted;
            List<Stored> rows = read(runId, cursor, bound);
            page.addAll(rows);
            if (rows.isEmpty()) {
                return page;
            }
            for (Stored row : rows) {
                wanted -= row.seq() - Math.max(row.first(), cursor + 1) + 1;
            }
            long last = rows.get(rows.size() - 1).seq();
            if (wanted <= 0 || last <= bound) {
                return page;
            }
            cursor = last;
        }
    }

    /** The newest stored seq of a run, if it has events. */
    @SqlQuery(LAST_SEQ)
    Optional<Long> lastSeq(String runId);

    /**
     * Where the log of each of these runs stands — its newest stored seq, and whether it was compacted — in
     * one statement; a run that has neither events nor a compacted log is left out.
     */
    Map<String, LogEnd> logEnds(List<String> runIds);

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

    /** Replaces each run's resume point (a batch holds each run once). */
    @SqlBatch(SAVE_RESUME_POINT)
    void saveResumePoints(@BindRow(ResumePointColumns.class) List<StoreBatch.ResumePoint> points);

    @SqlQuery(RESUME_POINT)
    Optional<StoreBatch.ResumePoint> resumePoint(String runId);

    /** Deletes a run's whole event log (its seq reservation stays). */
    @SqlUpdate(DELETE_EVENTS_OF_RUN)
    void deleteEventsOfRun(String runId);

    /** SQLite: a batch of rows is one JDBC batch (a prepared statement run once per row, in process). */
    interface Sqlite extends EventDao {
        String INSERT_EVENT = "INSERT INTO parley_run_events (run_id, seq, first_seq, created_at, type, payload) "
                + "VALUES (:runId, :seq, :firstSeq, :createdAt, :type, :payload) ON CONFLICT (run_id, seq) DO NOTHING";

        /**
         * Each run's last seq and whether its log is compacted, a probe of each key; the run ids come as one
         * JSON array.
         */
        String LOG_ENDS = "SELECT r.value AS run_id, (SELECT e.seq FROM parley_run_events e WHERE e.run_id = r.value "
                + "ORDER BY e.seq DESC LIMIT 1) AS last_seq, (SELECT p.events_compacted_at FROM parley_runs p "
                + "WHERE p.id = r.value) AS compacted_at FROM json_each(:runIds) r";

        @Override
        @SqlBatch(INSERT_EVENT)
        void insert(@BindRow(Columns.class) List<EventRows.Row> rows);

        @SqlQuery(LOG_ENDS)
        List<RunLogEnd> logEndRows(String runIds);

        @Override
        default Map<String, LogEnd> logEnds(List<String> runIds) {
            return RunLogEnd.map(logEndRows(Rows.json(runIds)));
        }
    }

    /**
     * PostgreSQL: a batch of rows is one statement, one array per column, in the same order. PostgreSQL
     * executes a JDBC batch row by row, a round trip each, about half as fast (measured by the bench,
     * section 2).
     */
    interface Postgres extends EventDao {
        String INSERT_EVENTS_UNNEST = "INSERT INTO parley_run_events (run_id, seq, first_seq, created_at, type, payload) "
                + "SELECT * FROM unnest(CAST(:runIds AS text[]), CAST(:seqs AS bigint[]), CAST(:firstSeqs AS bigint[]), "
                + "CAST(:createdAts AS bigint[]), CAST(:types AS text[]), CAST(:payloads AS text[])) "
                + "ON CONFLICT (run_id, seq) DO NOTHING";

        /** Each run's last seq and whether its log is compacted, a probe of each key. */
        String LOG_ENDS = "SELECT r.id AS run_id, (SELECT e.seq FROM parley_run_events e WHERE e.run_id = r.id "
                + "ORDER BY e.seq DESC LIMIT 1) AS last_seq, (SELECT p.events_compacted_at FROM parley_runs p "
                + "WHERE p.id = r.id) AS compacted_at FROM unnest(CAST(:runIds AS text[])) AS r(id)";

        /** Rows per array insert: bounds one statement's size when the writer catches up a long backlog. */
        int ROWS_PER_STATEMENT = 4096;

        @SqlUpdate(INSERT_EVENTS_UNNEST)
        void insertArrays(String[] runIds, Long[] seqs, Long[] firstSeqs, Long[] createdAts, String[] types,
                String[] payloads);

        @SqlQuery(LOG_ENDS)
        List<RunLogEnd> logEndRows(String[] runIds);

        /**
         * The arrays bypass the store's text argument, so their plain-text elements are made storable here
         * (PostgreSQL's text cannot hold U+0000); a JSON payload never holds a raw NUL.
         */
        @Override
        default void insert(List<EventRows.Row> rows) {
            for (int from = 0; from < rows.size(); from += ROWS_PER_STATEMENT) {
                List<EventRows.Row> chunk = rows.subList(from, Math.min(rows.size(), from + ROWS_PER_STATEMENT));
                int n = chunk.size();
                String[] runIds = new String[n];
                Long[] seqs = new Long[n];
                Long[] firstSeqs = new Long[n];
                Long[] createdAts = new Long[n];
                String[] types = new String[n];
                String[] payloads = new String[n];
                for (int i = 0; i < n; i++) {
                    EventRows.Row row = chunk.get(i);
                    runIds[i] = Dialect.POSTGRESQL.storableText(row.runId());
                    seqs[i] = row.seq();
                    firstSeqs[i] = row.firstSeq();
                    createdAts[i] = row.createdAt();
                    types[i] = Dialect.POSTGRESQL.storableText(row.type());
                    payloads[i] = row.payload();
                }
                insertArrays(runIds, seqs, firstSeqs, createdAts, types, payloads);
            }
        }

        @Override
        default Map<String, LogEnd> logEnds(List<String> runIds) {
            String[] ids = new String[runIds.size()];
            for (int i = 0; i < ids.length; i++) {
                ids[i] = Dialect.POSTGRESQL.storableText(runIds.get(i));
            }
            return RunLogEnd.map(logEndRows(ids));
        }
    }

    /** Binds a row's columns. */
    final class Columns implements BindRow.Binder<EventRows.Row> {
        @Override
        public void bind(SqlStatement<?> statement, EventRows.Row row) {
            statement.bind("runId", row.runId())
                    .bind("seq", row.seq())
                    .bind("firstSeq", row.firstSeq())
                    .bind("createdAt", row.createdAt())
                    .bind("type", row.type())
                    .bind("payload", row.payload());
        }
    }

    /** Binds a resume point's columns. */
    final class ResumePointColumns implements BindRow.Binder<StoreBatch.ResumePoint> {
        @Override
        public void bind(SqlStatement<?> statement, StoreBatch.ResumePoint point) {
            statement.bind("runId", point.runId()).bind("token", point.token()).bind("skip", point.skip())
                    .bind("followable", point.followable() ? 1 : 0);
        }
    }

    final class ResumePointMapper implements RowMapper<StoreBatch.ResumePoint> {
        @Override
        public StoreBatch.ResumePoint map(ResultSet rs, StatementContext ctx) throws SQLException {
            return new StoreBatch.ResumePoint(rs.getString("run_id"), rs.getString("token"), rs.getLong("skip"),
                    rs.getInt("followable") != 0);
        }
    }

    /** A stored row of a known run: one event ({@code firstSeq} null) or the span {@code firstSeq .. seq}. */
    record Stored(long seq, @Nullable Long firstSeq, long createdAt, String type, String payload) {
        /** The row's first seq. */
        long first() {
            return firstSeq == null ? seq : firstSeq;
        }

        public static final class Mapper implements RowMapper<Stored> {
            @Override
            public Stored map(ResultSet rs, StatementContext ctx) throws SQLException {
                return new Stored(rs.getLong("seq"), Rows.nullableLong(rs, "first_seq"), rs.getLong("created_at"),
                        rs.getString("type"), rs.getString("payload"));
            }
        }
    }

    /** The seqs a stored row holds: {@code first .. seq}. */
    record Span(long seq, long first) {
        public static final class Mapper implements RowMapper<Span> {
            @Override
            public Span map(ResultSet rs, StatementContext ctx) throws SQLException {
                long seq = rs.getLong("seq");
                Long first = Rows.nullableLong(rs, "first_seq");
                return new Span(seq, first == null ? seq : first);
            }
        }
    }

    /**
     * Where a run's log stands.
     *
     * @param lastSeq its newest stored seq, 0 if it has no events
     * @param compacted its log was compacted: it takes no more events
     */
    record LogEnd(long lastSeq, boolean compacted) {
    }

    /** A row of {@link #logEnds}. */
    record RunLogEnd(String runId, @Nullable Long lastSeq, @Nullable Long compactedAt) {
        static Map<String, LogEnd> map(List<RunLogEnd> rows) {
            Map<String, LogEnd> ends = new HashMap<>();
            for (RunLogEnd row : rows) {
                if (row.lastSeq() != null || row.compactedAt() != null) {
                    ends.put(row.runId(), new LogEnd(row.lastSeq() == null ? 0 : row.lastSeq(),
                            row.compactedAt() != null));
                }
            }
            return ends;
        }

        public static final class Mapper implements RowMapper<RunLogEnd> {
            @Override
            public RunLogEnd map(ResultSet rs, StatementContext ctx) throws SQLException {
                return new RunLogEnd(rs.getString("run_id"), Rows.nullableLong(rs, "last_seq"),
                        Rows.nullableLong(rs, "compacted_at"));
            }
        }
    }
}
