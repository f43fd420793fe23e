package dev.parley.simulation;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/** The stores a simulation runs on: one fresh database per simulation, opened once per instance. */
enum Stores {
    MEMORY, SQLITE, POSTGRES;

    private static final AtomicInteger SCHEMAS = new AtomicInteger();
    private static EmbeddedPostgres postgres;

    /** A fresh database; {@link Database#open()} gives each instance its own store on it. */
    Database create(Path work) {
        return switch (this) {
            case MEMORY -> new Database() {
                private final InMemoryChatStore shared = new InMemoryChatStore();

                @Override
                public ChatStore open() {
                    return shared;
                }
            };
            case SQLITE -> {
                Path file = work.resolve("sim-" + System.nanoTime() + ".db");
                yield new Database() {
                    private final List<ChatStore> opened = new ArrayList<>();

                    @Override
                    public ChatStore open() {
                        ChatStore store = JdbiChatStore.sqlite(file).build();
                        opened.add(store);
                        return store;
                    }

                    @Override
                    public void close() {
                        opened.forEach(ChatStore::close);
                        try {
                            Files.deleteIfExists(file);
                            Files.deleteIfExists(Path.of(file + "-wal"));
                            Files.deleteIfExists(Path.of(file + "-shm"));
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    }
                };
            }
            case POSTGRES -> {
                String schema = "sim_" + SCHEMAS.incrementAndGet();
                String url = postgres().getJdbcUrl("postgres", "postgres") + "&currentSchema=" + schema;
                try (Connection connection = postgres().getPostgresDatabase().getConnection();
                        Statement statement = connection.createStatement()) {
                    statement.execute("CREATE SCHEMA " + schema);
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
                yield new Database() {
                    private final List<HikariDataSource> pools = new ArrayList<>();
                    private final List<ChatStore> opened = new ArrayList<>();

                    @Override
                    public ChatStore open() {
                        HikariConfig config = new HikariConfig();
                        config.setJdbcUrl(url);
                        config.setMaximumPoolSize(6);
                        HikariDataSource pool = new HikariDataSource(config);
                        pools.add(pool);
                        ChatStore store = JdbiChatStore.builder(pool).build();
                        opened.add(store);
                        return store;
                    }

                    @Override
                    public void close() {
                        opened.forEach(ChatStore::close);
                        pools.forEach(HikariDataSource::close);
                    }
                };
            }
        };
    }

    private static synchronized EmbeddedPostgres postgres() {
        if (postgres == null) {
            try {
                postgres = EmbeddedPostgres.builder().start();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                try {
                    postgres.close();
                } catch (IOException ignored) {
                    // the JVM ends anyway
                }
            }));
        }
        return postgres;
    }

    /** One database of one simulation. */
    interface Database extends AutoCloseable {
        /** A store on the database, as one host instance opens it. */
        ChatStore open();

        @Override
        default void close() {
        }
    }
}
