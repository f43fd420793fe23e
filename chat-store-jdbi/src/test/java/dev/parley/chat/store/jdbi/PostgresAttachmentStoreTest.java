package dev.parley.chat.store.jdbi;

import dev.parley.chat.store.AttachmentStoreContract;
import dev.parley.chat.store.ChatStore;
import org.junit.jupiter.api.AfterEach;

/** The core attachment contract on a real PostgreSQL (embedded, started by the tests), one schema per test. */
class PostgresAttachmentStoreTest extends AttachmentStoreContract {
    private TestDatabase database;

    @Override
    protected ChatStore createStore() {
        database = TestDatabase.postgres();
        return database.store().build();
    }

    @AfterEach
    void closeDatabase() {
        database.close();
    }
}
