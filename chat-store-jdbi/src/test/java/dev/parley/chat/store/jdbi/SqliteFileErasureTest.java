package dev.parley.chat.store.jdbi;

/** On a SQLite file the store opens itself. */
class SqliteFileErasureTest extends SqliteErasureTest {
    @Override
    TestDatabase createDatabase() {
        return TestDatabase.sqliteFile(folder);
    }
}
