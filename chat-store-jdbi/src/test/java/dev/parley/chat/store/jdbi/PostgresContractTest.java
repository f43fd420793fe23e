package dev.parley.chat.store.jdbi;

import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.ChatStoreContract;
import org.junit.jupiter.api.AfterEach;

/** The core store contract on a real PostgreSQL (embedded, started by the tests), one schema per test. */
class PostgresContractTest extends ChatStoreContract {
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
