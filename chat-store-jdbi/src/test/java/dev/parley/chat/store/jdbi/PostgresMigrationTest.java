package dev.parley.chat.store.jdbi;

class PostgresMigrationTest extends MigrationTest {
    @Override
    TestDatabase createDatabase() {
        return TestDatabase.postgres();
    }
}
