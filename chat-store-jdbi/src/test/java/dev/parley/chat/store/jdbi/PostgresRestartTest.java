package dev.parley.chat.store.jdbi;

class PostgresRestartTest extends RestartTest {
    @Override
    TestDatabase createDatabase() {
        return TestDatabase.postgres();
    }
}
