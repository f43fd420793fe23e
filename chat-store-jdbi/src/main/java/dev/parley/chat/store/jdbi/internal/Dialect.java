package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.store.jdbi.DatabaseKind;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Duration;
import java.util.Arrays;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.argument.AbstractArgumentFactory;
import org.jdbi.v3.core.argument.Argument;
import org.jdbi.v3.core.config.ConfigRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The database under the store, and what differs for all of its statements. The DDL differs per database
 * (one migration folder each: identity columns, boolean and integer types, STRICT and WITHOUT ROWID tables).
 * The DML is shared but for a few statements, which the DAO they belong to keeps in a sub-interface per
 * database ({@link RunDao#of}, {@link EventDao#of}, {@link SchemaDao#of}). What differs for every
 * statement is here:
 *
 * <ul>
 *   <li>SQLite has one writer per file: the store serialises its writes ({@link #singleWriter()}) and
 *       gives each connection a busy timeout, so that a writer of another process is waited for. Every
 *       write transaction of the store starts with a write statement, so even a deferred {@code BEGIN}
 *       takes the write lock at its first statement, through the busy timeout, and never fails upgrading
 *       a read snapshot ({@code SQLITE_BUSY_SNAPSHOT});</li>
 *   <li>SQLite runs in WAL mode, so that readers never wait for the writer, and each connection enforces
 *       foreign keys and overwrites deleted content ({@code secure_delete});</li>
 *   <li>PostgreSQL's text cannot hold U+0000 ({@link #storableText}).</li>
 * </ul>
 */
public enum Dialect {
    SQLITE(DatabaseKind.SQLITE, "sqlite") {
        /** The busy timeout, foreign keys (deletes cascade; rows of a deleted thread fail) and secure deletes. */
        @Override
        public void prepareConnection(Connection connection, Duration busyTimeout) throws SQLException {
            try (Statement statement = connection.createStatement()) {
                statement.execute("PRAGMA busy_timeout = " + busyTimeout.toMillis());
                statement.execute("PRAGMA foreign_keys = ON");
                statement.execute("PRAGMA secure_delete = ON");
            }
        }

        /**
         * Switches the file to WAL and checks the settings of {@link #prepareConnection} took: without foreign
         * keys a deleted thread's rows would not go with it (a STORE_FAILURE); without secure deletes the
         * deleted text stays readable in the file (a warning).
         */
        @Override
        public void initialise(Handle handle) {
            String mode = handle.createQuery("PRAGMA journal_mode = WAL").mapTo(String.class).one();
            if (!"wal".equalsIgnoreCase(mode)) {
                log.warn("The SQLite database stays in journal mode {} (WAL is not possible for it, e.g. in memory); "
                        + "reads will wait for writes", mode);
            }
            if (pragma(handle, "foreign_keys") != 1) {
                throw new ChatException(ErrorCode.STORE_FAILURE, "SQLite does not enforce foreign keys on the "
                        + "store's connections (PRAGMA foreign_keys = ON did not take): deleting a thread would leave "
                        + "its rows behind; the SQLite library may be built without foreign key support");
            }
            if (pragma(handle, "secure_delete") != 1) {
                log.warn("SQLite does not overwrite deleted content on the store's connections (PRAGMA "
                        + "secure_delete = ON did not take): text of deleted threads stays readable in the file's "
                        + "free space until it is reused or the file is vacuumed (JdbiChatStore.reclaimErasedSpace)");
            }
        }

        /**
         * Checkpoints the write-ahead log into the file and truncates it: its frames hold the deleted pages as
         * they were before the delete.
         */
        @Override
        public void afterErase(StoreDatabase db) {
            try {
                db.writeWithoutTransaction("checkpointing the write-ahead log after a delete", h -> {
                    truncateWal(h);
                    return null;
                });
            } catch (ChatException e) {
                log.warn("The SQLite write-ahead log could not be checkpointed after a delete (the delete is "
                        + "committed): until the next checkpoint it may still hold deleted content", e);
            }
        }

        @Override
        public void reclaimErasedSpace(StoreDatabase db, boolean rewrite) {
            db.writeWithoutTransaction("vacuuming the database", h -> {
                h.execute("VACUUM");
                truncateWal(h);
                return null;
            });
        }

        private void truncateWal(Handle handle) {
            int busy = handle.createQuery("PRAGMA wal_checkpoint(TRUNCATE)").mapTo(Integer.class).one();
            if (busy != 0) {
                log.warn("The SQLite write-ahead log could not be truncated (another connection is reading or "
                        + "writing): until the next checkpoint it may still hold deleted content");
            }
        }

        private int pragma(Handle handle, String name) {
            return handle.createQuery("PRAGMA " + name).mapTo(Integer.class).findOne().orElse(0);
        }

        @Override
        public boolean singleWriter() {
            return true;
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
        public String storableText(String value) {
            return value.indexOf('\u0000') < 0 ? value : value.replace('\u0000', '\uFFFD');
        }

        @Override
        public boolean buildsSearchVectors() {
            return true;
        }

        @Override
        public void reclaimErasedSpace(StoreDatabase db, boolean rewrite) {
            String tables = String.join(", ", SchemaDao.TABLES);
            db.writeWithoutTransaction("vacuuming the Parley tables", h -> h.execute(
                    (rewrite ? "VACUUM (FULL) " : "VACUUM ") + tables));
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

    /**
     * The dialect of a data source's database, asked of a connection's metadata.
     *
     * @throws ChatException STORE_FAILURE if the database cannot be reached or is not supported
     */
    public static Dialect detect(DataSource source) {
        String product;
        try (Connection connection = source.getConnection()) {
            product = connection.getMetaData().getDatabaseProductName();
        } catch (SQLException | RuntimeException e) {
            throw new ChatException(ErrorCode.STORE_FAILURE, "cannot connect to the database", e);
        }
        return detect(product == null ? "" : product);
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
     * Run after a thread's rows were deleted and committed: what the database must do so that no copy is
     * left. Never throws: a failure is logged (the delete stands).
     */
    public void afterErase(StoreDatabase db) {
    }

    /**
     * Removes what deleted rows leave in the files (see {@code JdbiChatStore.reclaimErasedSpace}); with
     * {@code rewrite}, PostgreSQL rewrites the tables ({@code VACUUM FULL}).
     */
    public abstract void reclaimErasedSpace(StoreDatabase db, boolean rewrite);

    /** A text as this database can store it (PostgreSQL's text cannot hold U+0000). */
    public String storableText(String value) {
        return value;
    }

    /**
     * True if the store writes each searchable text's search vector with its row (PostgreSQL, see
     * {@link SearchText#vector}); SQLite's triggers keep its FTS5 index from the text itself.
     */
    public boolean buildsSearchVectors() {
        return false;
    }

    /** True if the database takes one writer at a time, so the store serialises its own writes. */
    public boolean singleWriter() {
        return false;
    }
}
