package dev.parley.chat.store.jdbi;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

class SqliteRestartTest extends RestartTest {
    @TempDir
    Path folder;

    @Override
    TestDatabase createDatabase() {
        return TestDatabase.sqliteFile(folder);
    }
}
