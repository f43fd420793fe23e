package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import javax.sql.DataSource;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.postgresql.ds.PGSimpleDataSource;

/** The store knows which database it is on, refuses others, and keeps secrets out of its errors. */
class DatabaseDetectionTest {
    @TempDir
    Path folder;

    @Test
    void anotherDatabaseIsRefusedBeforeAnythingIsWritten() {
        TestDatabase sqlite = TestDatabase.sqliteFile(folder);
        DataSource h2 = JdbcSpy.pretendingToBe("H2").wrap(sqlite.dataSource());

        assertThatThrownBy(() -> JdbiChatStore.builder(h2).build())
                .isInstanceOfSatisfying(ChatException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILURE);
                    assertThat(e.getMessage()).isEqualTo(
                            "unsupported database \"H2\": the Parley JDBI store runs on SQLite and PostgreSQL");
                });
        assertThatThrownBy(() -> ParleyMigrations.migrate(h2))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILURE));
        int tables = Jdbi.create(sqlite.dataSource()).withHandle(h -> h.createQuery(
                "SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'parley%'").mapTo(Integer.class).one());
        assertThat(tables).as("no table was created").isZero();
    }

    @Test
    void theDatabaseKindIsDetectedFromTheDriver() {
        try (TestDatabase sqlite = TestDatabase.sqlitePool(folder); TestDatabase postgres = TestDatabase.postgres();
                JdbiChatStore onSqlite = sqlite.store().build(); JdbiChatStore onPostgres = postgres.store().build()) {
            assertThat(onSqlite.databaseKind()).isEqualTo(DatabaseKind.SQLITE);
            assertThat(onPostgres.databaseKind()).isEqualTo(DatabaseKind.POSTGRESQL);
        }
    }

    @Test
    void anUnreachableDatabaseIsAStoreFailureThatKeepsThePasswordToItself() throws Exception {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        PGSimpleDataSource postgres = new PGSimpleDataSource();
        postgres.setServerNames(new String[] {"127.0.0.1"});
        postgres.setPortNumbers(new int[] {closedPort});
        postgres.setDatabaseName("parley");
        postgres.setUser("parley");
        postgres.setPassword("s3cret-Pa55word");

        assertThatThrownBy(() -> JdbiChatStore.builder(postgres).build())
                .isInstanceOfSatisfying(ChatException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILURE);
                    assertThat(e.getMessage()).isEqualTo("cannot connect to the database");
                    assertThat(e.getCause()).isNotNull();
                    assertThat(messages(e)).noneMatch(m -> m.contains("s3cret-Pa55word"));
                });
    }

    @Test
    void aFileThatCannotBeCreatedIsAStoreFailure() throws Exception {
        Path notAFolder = java.nio.file.Files.writeString(folder.resolve("plain-file"), "x");
        assertThatThrownBy(() -> JdbiChatStore.sqlite(notAFolder.resolve("parley.db")).build())
                .isInstanceOfSatisfying(ChatException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILURE);
                    assertThat(e.getCause()).isNotNull();
                });
    }

    private static List<String> messages(Throwable error) {
        List<String> messages = new ArrayList<>();
        for (Throwable t = error; t != null; t = t.getCause()) {
            messages.add(String.valueOf(t.getMessage()));
            messages.add(t.toString());
        }
        return messages;
    }
}
