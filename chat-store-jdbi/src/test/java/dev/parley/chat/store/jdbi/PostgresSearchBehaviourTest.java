package dev.parley.chat.store.jdbi;

/** The search on PostgreSQL (tsvectors with GIN indexes). */
class PostgresSearchBehaviourTest extends SearchBehaviourTest {
    @Override
    TestDatabase createDatabase() {
        return TestDatabase.postgres();
    }
}
