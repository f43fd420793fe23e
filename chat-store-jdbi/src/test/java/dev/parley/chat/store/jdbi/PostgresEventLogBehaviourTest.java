package dev.parley.chat.store.jdbi;

/** On the embedded PostgreSQL. */
class PostgresEventLogBehaviourTest extends EventLogBehaviourTest {
    @Override
    TestDatabase createDatabase() {
        return TestDatabase.postgres();
    }
}
