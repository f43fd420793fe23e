package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.store.jdbi.DatabaseKind;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.stream.Collectors;
import java.sql.Types;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.argument.AbstractArgumentFactory;
import org.jdbi.v3.core.argument.Argument;
import org.jdbi.v3.core.config.ConfigRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where SQLite and PostgreSQL differ, apart from the DDL (one migration folder per database: identity
 * columns, boolean and integer types, STRICT and WITHOUT ROWID tables). Every DML statement in {@link Sql}
 * is shared; what differs at run time is here:
 *
 * <ul>
 *   <li>SQLite has one writer per file: the store serialises its writes ({@link #singleWriter()}) and
 *       gives each connection a busy timeout, so that a writer of another process is waited for. Every
 *       write transaction of the store starts with a write statement, so even a deferred {@code BEGIN}
 *       takes the write lock at its first statement, through the busy timeout, and never fails upgrading
 *       a read snapshot ({@code SQLITE_BUSY_SNAPSHOT});</li>
 *   <li>SQLite runs in WAL mode, so that readers never wait for the writer.</li>
 * </ul>
 */
public enum Dialect {
    SQLITE(DatabaseKind.SQLITE, "sqlite") {
        @Override
        public void prepareConnection(Connection connection, Duration busyTimeout) throws SQLException {
            try (Statement statement = connection.createStatement()) {
                statement.execute("PRAGMA busy_timeout = " + busyTimeout.toMillis());
            }
        }

        @Override
        public void initialise(Handle handle) {
            String mode = handle.createQuery("PRAGMA journal_mode = WAL").mapTo(String.class).one();
            if (!"wal".equalsIgnoreCase(mode)) {
                log.warn("The SQLite database stays in journal mode {} (WAL is not possible for it, e.g. in memory); "
                        + "reads will wait for writes", mode);
            }
        }

        @Override
        public boolean singleWriter() {
            return true;
        }

        @Override
        public String indexExistsQuery() {
            return Sql.SQLITE_INDEX_EXISTS;
        }

        @Override
        public String fenceQuery() {
            return Sql.FENCE_LOST_RUNS;
        }

        /** sqlite-jdbc: {@code [SQLITE_CONSTRAINT_UNIQUE] … (UNIQUE constraint failed: parley_runs.thread_id)}. */
        @Override
        boolean violatesOneActiveRun(SQLException e) {
            String message = String.valueOf(e.getMessage());
            return message.contains("SQLITE_CONSTRAINT_UNIQUE") && message.contains("parley_runs.thread_id");
        }
    },
    POSTGRESQL(DatabaseKind.POSTGRESQL, "postgresql") {
        @Override
        public void configure(Jdbi jdbi) {
            jdbi.registerArgument(new AbstractArgumentFactory<String>(Types.VARCHAR) {
                @Override
                protected Argument build(String value, ConfigRegistry config) {
                    String stored = storableText(value);
                    return (position, statement, context) -> statement.setString(position, stored);
                }
            });
        }

        @Override
        public boolean insertsEventsAsArrays() {
            return true;
        }

        @Override
        public String storableText(String value) {
            return value.indexOf('\u0000') < 0 ? value : value.replace('\u0000', '\uFFFD');
        }

        @Override
        public String indexExistsQuery() {
            return Sql.POSTGRESQL_INDEX_EXISTS;
        }

        @Override
        public String fenceQuery() {
            return Sql.FENCE_LOCK_RUNS;
        }

        /** SQLSTATE 23505 (unique_violation), its message naming the index (in any server language). */
        @Override
        boolean violatesOneActiveRun(SQLException e) {
            return "23505".equals(e.getSQLState()) && String.valueOf(e.getMessage()).contains(Sql.ONE_ACTIVE_RUN_INDEX);
        }
    };

    private static final Logger log = LoggerFactory.getLogger(Dialect.class);

    /**
     * Adapts a Jdbi to the database. PostgreSQL's text type cannot hold U+0000: a NUL in a plain text
     * column (a runtime's error message, a clarify question, …) would fail the whole batch, and with it
     * every run's events, so it is stored as U+FFFD. JSON columns never hold a raw NUL (JSON escapes it).
     */
    public void configure(Jdbi jdbi) {
    }

    /** The classpath folder holding one migration folder per database. */
    public static final String MIGRATION_ROOT = "dev/parley/chat/store/jdbi/migration";

    private final DatabaseKind kind;
    private final String folder;

    Dialect(DatabaseKind kind, String folder) {
        this.kind = kind;
        this.folder = folder;
    }

    /**
     * The dialect of a database from its JDBC product name.
     *
     * @throws ChatException STORE_FAILURE for a database the store does not support: a configuration
     *     mistake of the host, found at start-up, not a request a caller could correct
     */
    public static Dialect detect(String productName) {
        for (Dialect dialect : values()) {
            if (dialect.kind.productName().equalsIgnoreCase(productName.trim())) {
                return dialect;
            }
        }
        throw new ChatException(ErrorCode.STORE_FAILURE, "unsupported database \"" + productName
                + "\": the Parley JDBI store runs on " + Arrays.stream(values())
                        .map(d -> d.kind.productName()).collect(Collectors.joining(" and ")));
    }

    public static Dialect of(DatabaseKind kind) {
        for (Dialect dialect : values()) {
            if (dialect.kind == kind) {
                return dialect;
            }
        }
        throw new IllegalArgumentException(String.valueOf(kind));
    }

    public DatabaseKind kind() {
        return kind;
    }

    /** The Flyway location of this database's migration scripts. */
    public String migrationLocation() {
        return "classpath:" + migrationFolder();
    }

    /** The classpath folder of this database's migration scripts. */
    public String migrationFolder() {
        return MIGRATION_ROOT + "/" + folder;
    }

    /** Sets up a connection the store is about to use (every time it gets one). */
    public void prepareConnection(Connection connection, Duration busyTimeout) throws SQLException {
    }

    /** Run once when the store starts, after the migrations. */
    public void initialise(Handle handle) {
    }

    /**
     * True if a batch of events goes in as one statement over arrays ({@link Sql#INSERT_EVENTS_UNNEST}):
     * PostgreSQL executes a JDBC batch row by row, a round trip each, about half as fast (measured by the
     * bench, section 2).
     */
    public boolean insertsEventsAsArrays() {
        return false;
    }

    /** A text as this database can store it (PostgreSQL's text cannot hold U+0000). */
    public String storableText(String value) {
        return value;
    }

    /** True if the database takes one writer at a time, so the store serialises its own writes. */
    public boolean singleWriter() {
        return false;
    }

    /**
     * The fence check of a batch, binding {@code <runIds>} and {@code :fence}: rows {@code (id, lease_owner)}
     * including every run of the list leased by another instance, and keeping another instance from taking
     * a run of the list over until the transaction ends ({@link Sql#FENCE_LOCK_RUNS},
     * {@link Sql#FENCE_LOST_RUNS}).
     */
    public abstract String fenceQuery();

    /** A query binding {@code :name} that returns 1 if that index exists, else 0. */
    public abstract String indexExistsQuery();

    /**
     * True if a failed statement broke {@link Sql#ONE_ACTIVE_RUN_INDEX}: somewhere in its causes (and, for a
     * JDBC batch, their next exceptions) is that unique violation.
     */
    public boolean violatesOneActiveRun(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof SQLException) {
                for (SQLException e = (SQLException) t; e != null; e = e.getNextException()) {
                    if (violatesOneActiveRun(e)) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    abstract boolean violatesOneActiveRun(SQLException e);
}
