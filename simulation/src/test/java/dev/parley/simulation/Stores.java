package dev.parley.simulation;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.attachment.BlobStore;
import dev.parley.chat.attachment.InMemoryBlobStore;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.io.InputStream;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
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
                private final InMemoryBlobStore blobs = new InMemoryBlobStore();
                /** Every key the blob store gave out, with its owner: the store itself lists none. */
                private final Map<String, String> given = new ConcurrentHashMap<>();

                @Override
                public ChatStore open() {
                    return shared;
                }

                @Override
                public BlobStore blobStore(ChatStore opened) {
                    return new BlobStore() {
                        @Override
                        public String put(String ownerId, InputStream content) {
                            String key = blobs.put(ownerId, content);
                            given.put(key, ownerId);
                            return key;
                        }

                        @Override
                        public InputStream open(String key, long offset) {
                            return blobs.open(key, offset);
                        }

                        @Override
                        public void delete(String key) {
                            blobs.delete(key);
                        }

                        @Override
                        public void deleteOwner(String ownerId) {
                            blobs.deleteOwner(ownerId);
                        }
                    };
                }

                @Override
                public Map<String, String> blobOwners() {
                    Map<String, String> held = new HashMap<>();
                    given.forEach((key, owner) -> {
                        try {
                            blobs.open(key, 0).close();
                            held.put(key, owner);
                        } catch (ChatException e) {
                            if (e.code() != ErrorCode.NOT_FOUND) {
                                throw e;
                            }
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
                    for (int unknown = held.size(); unknown < blobs.size(); unknown++) {
                        held.put("unknown-" + unknown, "?");
                    }
                    return held;
                }
            };
            case SQLITE -> {
                Path file = work.resolve("sim-" + System.nanoTime() + ".db");
                yield new Database() {
                    private final List<ChatStore> opened = new ArrayList<>();
                    private final ChunkOwners chunks = new ChunkOwners("jdbc:sqlite:" + file);

                    @Override
                    public ChatStore open() {
                        ChatStore store = JdbiChatStore.sqlite(file).build();
                        opened.add(store);
                        return store;
                    }

                    @Override
                    public Map<String, String> blobOwners() {
                        return chunks.list();
                    }

                    @Override
                    public void close() {
                        chunks.close();
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
                    private final ChunkOwners chunks = new ChunkOwners(url);

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
                    public Map<String, String> blobOwners() {
                        return chunks.list();
                    }

                    @Override
                    public void close() {
                        chunks.close();
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

    /**
     * Every blob whose chunks a database holds (JdbiBlobStore), with its owner, read on a connection of the
     * simulation's own (opened at the first call, closed with the database). Thread-safe.
     */
    private static final class ChunkOwners implements AutoCloseable {
        private final String url;
        private Connection connection;

        ChunkOwners(String url) {
            this.url = url;
        }

        synchronized Map<String, String> list() {
            Map<String, String> held = new HashMap<>();
            try {
                if (connection == null) {
                    connection = DriverManager.getConnection(url);
                }
                try (Statement statement = connection.createStatement();
                        ResultSet rows = statement.executeQuery("SELECT DISTINCT blob_key, owner_id FROM parley_blob_chunks")) {
                    while (rows.next()) {
                        held.put(rows.getString(1), rows.getString(2));
                    }
                }
            } catch (SQLException e) {
                throw new IllegalStateException("listing the blobs failed", e);
            }
            return held;
        }

        @Override
        public synchronized void close() {
            if (connection != null) {
                try {
                    connection.close();
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            }
        }
    }

    /** One database of one simulation. */
    interface Database extends AutoCloseable {
        /** A store on the database, as one host instance opens it. */
        ChatStore open();

        /** Where an instance keeps attachment bytes, beside the store it opened. */
        default BlobStore blobStore(ChatStore opened) {
            return ((JdbiChatStore) opened).blobStore();
        }

        /** Every blob the blob store holds, key to owner, read past the faults ("?" for one the store cannot name). */
        Map<String, String> blobOwners();

        @Override
        default void close() {
        }
    }
}
