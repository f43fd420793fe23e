package dev.parley.chat.store.jdbi;

/** The blob store on a real PostgreSQL (embedded, started by the tests), one schema per test. */
class PostgresBlobStoreBehaviourTest extends BlobStoreBehaviourTest {
    @Override
    TestDatabase createDatabase() {
        return TestDatabase.postgres();
    }
}
