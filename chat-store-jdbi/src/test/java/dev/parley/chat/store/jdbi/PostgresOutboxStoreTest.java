package dev.parley.chat.store.jdbi;

import dev.parley.chat.outbox.OutboxStoreContract;
import dev.parley.chat.store.ChatStore;
import org.junit.jupiter.api.AfterEach;

/** The core outbox contract on a real PostgreSQL (embedded, started by the tests), one schema per test. */
class PostgresOutboxStoreTest extends OutboxStoreContract {
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
