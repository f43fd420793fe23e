package dev.parley.bench;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.sqlite.SQLiteConfig;

/**
 * The databases of the suite: SQLite files in a temporary folder (opened the way the store opens them:
 * WAL, synchronous=FULL, busy timeout, BEGIN IMMEDIATE) and one embedded PostgreSQL 17 (zonky's binaries,
 * started under {@code unshare -U} when run as root), with its default durability settings (fsync and
 * synchronous_commit on). Each use gets a fresh SQLite file or a fresh PostgreSQL schema.
 */
final class Databases implements AutoCloseable {
    private final Path folder;
    private final AtomicInteger counter = new AtomicInteger();
    private final List<HikariDataSource> pools = new ArrayList<>();
    private EmbeddedPostgres postgres;
    private long postgresStartMillis;

    Databases() {
        try {
            folder = Files.createTempDirectory("parley-bench-");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    // ------------------------------------------------------------------ SQLite

    /** A path for a new SQLite file (not created yet). */
    Path newSqliteFile(String name) {
        return folder.resolve(name + "-" + counter.incrementAndGet() + ".db");
    }

    /** The store on a new SQLite file it owns ({@link JdbiChatStore#sqlite}), the embedded default. */
    JdbiChatStore newSqliteStore(String name) {
        return JdbiChatStore.sqlite(newSqliteFile(name)).build();
    }

    /** A plain JDBC connection to a SQLite file, configured as the store configures its own. */
    static Connection sqliteConnection(Path file) throws SQLException {
        SQLiteConfig config = new SQLiteConfig();
        config.setJournalMode(SQLiteConfig.JournalMode.WAL);
        config.setSynchronous(SQLiteConfig.SynchronousMode.FULL);
        config.setBusyTimeout(5000);
        config.setTransactionMode(SQLiteConfig.TransactionMode.IMMEDIATE);
        return DriverManager.getConnection("jdbc:sqlite:" + file.toAbsolutePath(), config.toProperties());
    }

    // ------------------------------------------------------------------ PostgreSQL

    synchronized EmbeddedPostgres postgres() {
        if (postgres == null) {
            long start = System.nanoTime();
            try {
                // zonky turns durability off by default; the suite measures PostgreSQL as it runs in production
                postgres = EmbeddedPostgres.builder()
                        .setServerConfig("max_connections", "300")
                        .setServerConfig("fsync", "on")
                        .setServerConfig("synchronous_commit", "on")
                        .setServerConfig("full_page_writes", "on")
                        .start();
            } catch (IOException e) {
                throw new UncheckedIOException("the embedded PostgreSQL did not start", e);
            }
            postgresStartMillis = (System.nanoTime() - start) / 1_000_000;
        }
        return postgres;
    }

    long postgresStartMillis() {
        return postgresStartMillis;
    }

    String postgresVersion() {
        try (Connection c = postgres().getPostgresDatabase().getConnection();
                Statement s = c.createStatement();
                var rs = s.executeQuery("SHOW server_version")) {
            rs.next();
            String fsync;
            try (var rs2 = c.createStatement().executeQuery("SHOW fsync")) {
                rs2.next();
                fsync = rs2.getString(1);
            }
            String sync;
            try (var rs3 = c.createStatement().executeQuery("SHOW synchronous_commit")) {
                rs3.next();
                sync = rs3.getString(1);
            }
            return "PostgreSQL " + rs.getString(1) + " (fsync=" + fsync + ", synchronous_commit=" + sync + ")";
        } catch (SQLException e) {
            return "PostgreSQL (version unknown: " + e.getMessage() + ")";
        }
    }

    /** A new empty schema; returns a JDBC URL whose connections work in it. */
    String newPostgresSchema(String name) {
        String schema = name + "_" + counter.incrementAndGet();
        try (Connection c = postgres().getPostgresDatabase().getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE SCHEMA " + schema);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return postgres().getJdbcUrl("postgres", "postgres") + "&currentSchema=" + schema;
    }

    /** A HikariCP pool, closed with this object. */
    HikariDataSource pool(String jdbcUrl, int size) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(jdbcUrl);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(1);
        HikariDataSource pool = new HikariDataSource(config);
        synchronized (pools) {
            pools.add(pool);
        }
        return pool;
    }

    /** The store on a new PostgreSQL schema behind a pool of 10 (as a host would configure it). */
    JdbiChatStore newPostgresStore(String name) {
        return JdbiChatStore.builder(pool(newPostgresSchema(name), 10)).build();
    }

    void closePool(HikariDataSource pool) {
        synchronized (pools) {
            pools.remove(pool);
        }
        pool.close();
    }

    @Override
    public void close() {
        synchronized (pools) {
            pools.forEach(HikariDataSource::close);
            pools.clear();
        }
        if (postgres != null) {
            try {
                postgres.close();
            } catch (IOException e) {
                System.err.println("closing the embedded PostgreSQL failed: " + e);
            }
        }
        try (Stream<Path> files = Files.walk(folder)) {
            files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }
}
