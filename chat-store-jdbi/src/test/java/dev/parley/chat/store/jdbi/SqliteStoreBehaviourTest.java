package dev.parley.chat.store.jdbi;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** On SQLite files the stores open themselves (two stores on one file play two processes). */
class SqliteStoreBehaviourTest extends StoreBehaviourTest {
    @TempDir
    Path folder;

    @Override
    TestDatabase createDatabase() {
        return TestDatabase.sqliteFile(folder);
    }
}
