package dev.parley.chat.store.jdbi;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import javax.sql.DataSource;
import org.sqlite.SQLiteConfig;
import org.sqlite.SQLiteDataSource;

/**
 * An empty database for one test, on SQLite or on PostgreSQL, from which stores are built (several stores
 * on one database play several processes). {@link #close()} releases every pool opened for it.
 */
abstract class TestDatabase implements AutoCloseable {
    private final List<HikariDataSource> pools = new ArrayList<>();

    abstract DatabaseKind kind();

    /** A new store builder on this database, the way a host would configure it. */
    abstract JdbiChatStore.Builder store();

    /** Direct access to the database, beside the stores (checks, EXPLAIN, sabotage). */
    abstract DataSource dataSource();

    /** The JDBC URL of this database, for a pool of a test's own. */
    abstract String jdbcUrl();

    /** A SQLite file the stores open themselves ({@link JdbiChatStore#sqlite}): the embedded default. */
    static TestDatabase sqliteFile(Path folder) {
        return new Sqlite(folder.resolve("parley.db"), false);
    }

    /** A SQLite file behind the host's HikariCP pool ({@link JdbiChatStore#builder}). */
    static TestDatabase sqlitePool(Path folder) {
        try {
            Files.createDirectories(folder);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Sqlite(folder.resolve("parley.db"), true);
    }

    /** A fresh schema on the embedded PostgreSQL, behind HikariCP pools. */
    static TestDatabase postgres() {
        return new Postgres(EmbeddedPostgresServer.newSchema());
    }

    HikariDataSource pool(String url, int size, Function<HikariConfig, HikariConfig> tuning) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(url);
        config.setMaximumPoolSize(size);
        config.setMinimumIdle(1);
        HikariDataSource pool = new HikariDataSource(tuning.apply(config));
        pools.add(pool);
        return pool;
    }

    @Override
    public void close() {
        pools.forEach(HikariDataSource::close);
    }

    private static final class Sqlite extends TestDatabase {
        private final Path file;
        private final boolean pooled;

        Sqlite(Path file, boolean pooled) {
            this.file = file;
            this.pooled = pooled;
        }

        @Override
        DatabaseKind kind() {
            return DatabaseKind.SQLITE;
        }

        @Override
        JdbiChatStore.Builder store() {
            return pooled ? JdbiChatStore.builder(pool(jdbcUrl(), 8, c -> c)) : JdbiChatStore.sqlite(file);
        }

        @Override
        DataSource dataSource() {
            SQLiteConfig config = new SQLiteConfig();
            config.setBusyTimeout(5000);
            SQLiteDataSource dataSource = new SQLiteDataSource(config);
            dataSource.setUrl("jdbc:sqlite:" + file);
            return dataSource;
        }

        @Override
        String jdbcUrl() {
            return "jdbc:sqlite:" + file;
        }

        @Override
        public String toString() {
            return pooled ? "SQLite file behind HikariCP" : "SQLite file";
        }
    }

    private static final class Postgres extends TestDatabase {
        private final String schema;
        private DataSource direct;

        Postgres(String schema) {
            this.schema = schema;
        }

        @Override
        DatabaseKind kind() {
            return DatabaseKind.POSTGRESQL;
        }

        @Override
        JdbiChatStore.Builder store() {
            return JdbiChatStore.builder(pool(jdbcUrl(), 10, c -> c));
        }

        @Override
        synchronized DataSource dataSource() {
            if (direct == null) {
                direct = pool(jdbcUrl(), 4, c -> c);
            }
            return direct;
        }

        @Override
        String jdbcUrl() {
            return EmbeddedPostgresServer.jdbcUrl(schema);
        }

        @Override
        public String toString() {
            return "PostgreSQL schema " + schema;
        }
    }
}
