package dev.parley.chat.store.jdbi;

import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.ChatStoreContract;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/** The core store contract on a SQLite file behind the host's connection pool. */
class SqlitePoolContractTest extends ChatStoreContract {
    @TempDir
    Path folder;
    private TestDatabase database;

    @Override
    protected ChatStore createStore() {
        database = TestDatabase.sqlitePool(folder);
        return database.store().build();
    }

    @AfterEach
    void closeDatabase() {
        database.close();
    }
}
