package dev.parley.chat.store.jdbi;

/** On a SQLite file behind the host's pool, whose URL sets no pragma: the store sets what erasure needs. */
class SqlitePoolErasureTest extends SqliteErasureTest {
    @Override
    TestDatabase createDatabase() {
        return TestDatabase.sqlitePool(folder);
    }
}
