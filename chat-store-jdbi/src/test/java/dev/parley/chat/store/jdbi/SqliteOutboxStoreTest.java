package dev.parley.chat.store.jdbi;

import dev.parley.chat.outbox.OutboxStoreContract;
import dev.parley.chat.store.ChatStore;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/** The core outbox contract on a SQLite file the store opens itself (the embedded default). */
class SqliteOutboxStoreTest extends OutboxStoreContract {
    @TempDir
    Path folder;
    private TestDatabase database;

    @Override
    protected ChatStore createStore() {
        database = TestDatabase.sqliteFile(folder);
        return database.store().build();
    }

    @AfterEach
    void closeDatabase() {
        database.close();
    }
}
