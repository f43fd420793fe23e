package dev.parley.chat.store.jdbi;

/** Trees, client ids and compaction on PostgreSQL (two stores with their own pools play two instances). */
class PostgresTreeBehaviourTest extends TreeBehaviourTest {
    @Override
    TestDatabase createDatabase() {
        return TestDatabase.postgres();
    }
}
