package dev.parley.chat.store.jdbi.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.jdbi.v3.core.ConnectionFactory;
import org.jdbi.v3.core.HandleCallback;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.sqlobject.SqlObjectPlugin;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store's way to its database: reads on handles of their own, writes in transactions, serialised when
 * the database takes one writer at a time (SQLite), and every failure of the database turned into a
 * {@link ChatException} with {@link ErrorCode#STORE_FAILURE} and the cause (a ChatException the work throws,
 * such as CONFLICT, passes as it is). Thread-safe.
 */
public final class StoreDatabase implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(StoreDatabase.class);
    /** Idle SQLite read connections kept open by a store that owns its file. */
    private static final int IDLE_SQLITE_READERS = 4;

    private final Dialect dialect;
    private final Jdbi reads;
    private final Jdbi writes;
    private final Daos readDaos;
    private final Daos writeDaos;
    private final @Nullable ReentrantLock writeLock;
    private final @Nullable AutoCloseable owned;

    private StoreDatabase(Dialect dialect, Jdbi reads, Jdbi writes, @Nullable AutoCloseable owned) {
        this.dialect = dialect;
        this.reads = reads;
        this.writes = writes;
        this.readDaos = new Daos(reads, dialect);
        this.writeDaos = writes == reads ? readDaos : new Daos(writes, dialect);
        this.writeLock = dialect.singleWriter() ? new ReentrantLock() : null;
        this.owned = owned;
    }

    /**
     * Over a host's data source (a pool, typically); the host keeps owning it. Every connection is used in
     * auto-commit mode, so reads commit at once and writes commit their own transactions, whatever the
     * pool's default; it goes back to the pool with the pool's setting ({@link AutoCommit}).
     */
    public static StoreDatabase over(DataSource dataSource, Dialect dialect, Duration busyTimeout) {
        Jdbi jdbi = jdbi(new HostConnections(dataSource, dialect, busyTimeout), dialect);
        return new StoreDatabase(dialect, jdbi, jdbi, null);
    }

    /**
     * Over a SQLite file the store owns: one connection kept open for all writes (SQLite's single writer;
     * keeping it open also keeps the WAL from being checkpointed away after every call) and a few idle read
     * connections, so a read costs no file open. Closed with the store.
     */
    public static StoreDatabase ownedSqlite(DataSource dataSource, Duration busyTimeout) {
        Connection writer;
        try {
            writer = prepared(dataSource.getConnection(), Dialect.SQLITE, busyTimeout);
        } catch (SQLException e) {
            throw new ChatException(ErrorCode.STORE_FAILURE, "cannot open the SQLite file", e);
        }
        IdleConnections readers = new IdleConnections(dataSource, Dialect.SQLITE, busyTimeout, IDLE_SQLITE_READERS);
        Jdbi writes = jdbi(new ConnectionFactory() {
            @Override
            public Connection openConnection() {
                return writer;
            }

            @Override
            public void closeConnection(Connection connection) {
                // the writer stays open until the store closes
            }
        }, Dialect.SQLITE);
        return new StoreDatabase(Dialect.SQLITE, jdbi(readers, Dialect.SQLITE), writes, () -> {
            readers.close();
            writer.close();
        });
    }

    /** A Jdbi that takes SqlObject DAOs ({@link SqlObjectPlugin}), adapted to the database. */
    private static Jdbi jdbi(ConnectionFactory connections, Dialect dialect) {
        Jdbi jdbi = Jdbi.create(connections).installPlugin(new SqlObjectPlugin());
        dialect.configure(jdbi);
        return jdbi;
    }

    private static Connection prepared(Connection connection, Dialect dialect, Duration busyTimeout)
            throws SQLException {
        try {
            dialect.prepareConnection(connection, busyTimeout);
            return connection;
        } catch (SQLException | RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    public Dialect dialect() {
        return dialect;
    }

    /**
     * Runs a read on a handle of its own, in auto-commit mode (no transaction stays open); never waits for a
     * writer of this store. The DAOs' calls in {@code work} run on that handle.
     */
    public <T> T read(String what, Daos.Work<T> work) {
        try {
            return reads.withHandle(h -> work.on(readDaos));
        } catch (RuntimeException e) {
            throw failure(what, e);
        }
    }

    /**
     * Runs work in one transaction (serialised with the store's other writes on SQLite); the DAOs' calls in
     * {@code work} run in it.
     */
    public <T> T write(String what, Daos.Work<T> work) {
        return serialised(what, () -> writes.inTransaction(h -> work.on(writeDaos)));
    }

    /** Runs work on the write connection outside a transaction (for statements that forbid one). */
    public <T> T writeWithoutTransaction(String what, HandleCallback<T, RuntimeException> work) {
        return serialised(what, () -> writes.withHandle(work));
    }

    private <T> T serialised(String what, Supplier<T> work) {
        ReentrantLock lock = writeLock;
        if (lock != null) {
            lock.lock();
        }
        try {
            return work.get();
        } catch (RuntimeException e) {
            throw failure(what, e);
        } finally {
            if (lock != null) {
                lock.unlock();
            }
        }
    }

    /** A failure as the store reports it: a ChatException the work threw (e.g. CONFLICT) as it is. */
    private ChatException failure(String what, RuntimeException e) {
        if (e instanceof ChatException) {
            return (ChatException) e;
        }
        return new ChatException(ErrorCode.STORE_FAILURE,
                what + " failed on " + dialect.kind().productName(), e);
    }

    @Override
    public void close() {
        if (owned == null) {
            return;
        }
        try {
            owned.close();
        } catch (Exception e) {
            log.warn("Closing the store's connections failed", e);
        }
    }

    /** The host's connections, switched to auto-commit while the store holds them. */
    private static final class HostConnections implements ConnectionFactory {
        private final DataSource source;
        private final Dialect dialect;
        private final Duration busyTimeout;
        /** The connections whose auto-commit this store turned on (by identity: pools hand out proxies). */
        private final Set<Connection> switched =
                Collections.synchronizedSet(Collections.newSetFromMap(new IdentityHashMap<>()));

        HostConnections(DataSource source, Dialect dialect, Duration busyTimeout) {
            this.source = source;
            this.dialect = dialect;
            this.busyTimeout = busyTimeout;
        }

        @Override
        public Connection openConnection() throws SQLException {
            Connection connection = source.getConnection();
            boolean switchedOn = false;
            try {
                switchedOn = AutoCommit.switchOn(connection);
                dialect.prepareConnection(connection, busyTimeout);
            } catch (SQLException | RuntimeException e) {
                try (connection) {
                    AutoCommit.restore(connection, switchedOn);
                } catch (SQLException suppressed) {
                    e.addSuppressed(suppressed);
                }
                throw e;
            }
            if (switchedOn) {
                switched.add(connection);
            }
            return connection;
        }

        @Override
        public void closeConnection(Connection connection) throws SQLException {
            try (connection) {
                AutoCommit.restore(connection, switched.remove(connection));
            }
        }
    }

    /**
     * Connections from a data source, of which up to {@code max} idle ones are kept open for the next
     * caller instead of being closed. Never blocks: a caller finding none idle opens a new one.
     */
    private static final class IdleConnections implements ConnectionFactory, AutoCloseable {
        private final DataSource source;
        private final Dialect dialect;
        private final Duration busyTimeout;
        private final BlockingQueue<Connection> idle;
        private volatile boolean closed;

        IdleConnections(DataSource source, Dialect dialect, Duration busyTimeout, int max) {
            this.source = Objects.requireNonNull(source);
            this.dialect = dialect;
            this.busyTimeout = busyTimeout;
            this.idle = new ArrayBlockingQueue<>(max);
        }

        @Override
        public Connection openConnection() throws SQLException {
            if (closed) {
                throw new SQLException("the store is closed");
            }
            Connection connection = idle.poll();
            return connection != null ? connection : prepared(source.getConnection(), dialect, busyTimeout);
        }

        @Override
        public void closeConnection(Connection connection) throws SQLException {
            if (!closed && connection.getAutoCommit() && idle.offer(connection)) {
                if (closed) {
                    closeIdle();
                }
                return;
            }
            connection.close();
        }

        private void closeIdle() {
            Connection connection;
            while ((connection = idle.poll()) != null) {
                try {
                    connection.close();
                } catch (SQLException e) {
                    log.debug("Closing an idle read connection failed", e);
                }
            }
        }

        @Override
        public void close() {
            closed = true;
            closeIdle();
        }
    }
}
