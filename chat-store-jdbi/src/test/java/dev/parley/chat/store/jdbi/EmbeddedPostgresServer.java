package dev.parley.chat.store.jdbi;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One real PostgreSQL per test JVM (zonky's embedded binaries, PostgreSQL 17), started on first use and
 * stopped by zonky's shutdown hook. Each test gets a schema of its own, so every store starts empty.
 *
 * <p>Run as root, PostgreSQL refuses to start ({@code initdb: cannot be run as root}); zonky then runs
 * {@code initdb}, {@code pg_ctl} and {@code postgres} under {@code unshare -U}, a user namespace where the
 * process is not root, when that command is available (it is on this machine's Debian).
 */
final class EmbeddedPostgresServer {
    private static final AtomicInteger SCHEMAS = new AtomicInteger();
    private static EmbeddedPostgres server;

    private EmbeddedPostgresServer() {
    }

    static synchronized EmbeddedPostgres get() {
        if (server == null) {
            try {
                server = EmbeddedPostgres.builder()
                        // the tests check behaviour, not power-loss durability: skip the fsyncs
                        .setServerConfig("fsync", "off")
                        .setServerConfig("synchronous_commit", "off")
                        .setServerConfig("full_page_writes", "off")
                        .setServerConfig("max_connections", "300")
                        .start();
            } catch (IOException e) {
                throw new UncheckedIOException("the embedded PostgreSQL did not start", e);
            }
        }
        return server;
    }

    /** Creates an empty schema and returns its name. */
    static String newSchema() {
        String schema = "test_" + SCHEMAS.incrementAndGet();
        try (Connection connection = get().getPostgresDatabase().getConnection();
                Statement statement = connection.createStatement()) {
            statement.execute("CREATE SCHEMA " + schema);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
        return schema;
    }

    /** A JDBC URL whose connections work in the given schema. */
    static String jdbcUrl(String schema) {
        return get().getJdbcUrl("postgres", "postgres") + "&currentSchema=" + schema;
    }
}
