package dev.parley.chat.store.jdbi;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** On a SQLite file the store opens itself. */
class SqliteEventLogBehaviourTest extends EventLogBehaviourTest {
    @TempDir
    Path folder;

    @Override
    TestDatabase createDatabase() {
        return TestDatabase.sqliteFile(folder);
    }
}
