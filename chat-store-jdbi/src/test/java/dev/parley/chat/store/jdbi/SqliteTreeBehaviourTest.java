package dev.parley.chat.store.jdbi;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** Trees, client ids and compaction on a SQLite file (two stores on one file play two processes). */
class SqliteTreeBehaviourTest extends TreeBehaviourTest {
    @TempDir
    Path folder;

    @Override
    TestDatabase createDatabase() {
        return TestDatabase.sqliteFile(folder);
    }
}
