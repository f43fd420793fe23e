package dev.parley.chat.store.jdbi;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** The blob store on a SQLite file the store opens itself (the embedded default). */
class SqliteBlobStoreBehaviourTest extends BlobStoreBehaviourTest {
    @TempDir
    Path folder;

    @Override
    TestDatabase createDatabase() {
        return TestDatabase.sqliteFile(folder);
    }
}
