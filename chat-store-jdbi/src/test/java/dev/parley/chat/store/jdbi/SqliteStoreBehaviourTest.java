package dev.parley.chat.store.jdbi;

import com.zaxxer.hikari.HikariDataSource;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** On SQLite files the stores open themselves (two stores on one file play two processes). */
class SqliteStoreBehaviourTest extends StoreBehaviourTest {
    @TempDir
    Path folder;

    @Override
    TestDatabase createDatabase() {
        return TestDatabase.sqliteFile(folder);
    }

    /**
     * A fresh file behind a pool with auto-commit off: the store starts (WAL mode cannot be set inside a
     * transaction) and keeps its writes after the pool is gone.
     */
    @Test
    void aFreshFileBehindAnAutoCommitOffPoolStartsAndKeepsItsWrites() {
        HikariDataSource noAutoCommit = database.pool(database.jdbcUrl(), 4, config -> {
            config.setAutoCommit(false);
            return config;
        });
        try (JdbiChatStore store = JdbiChatStore.builder(noAutoCommit).build()) {
            writeEveryKind(store);
        }
        noAutoCommit.close();
        try (JdbiChatStore reopened = database.store().build()) {
            assertEveryKindStored(reopened);
        }
    }
}
