package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.testing.Await;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * SQLite's single writer: the store serialises its own writes, waits (busy timeout) for another process's
 * writer, and its reads never wait for any writer (WAL).
 */
class SqliteConcurrencyTest {
    private static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");

    @TempDir
    Path folder;

    private static ChatThread thread(String id) {
        return new ChatThread(id, "alice", null, null, null, null, ThreadStatus.ACTIVE, T0, T0);
    }

    @Test
    void bothKindsOfStorePutTheFileInWalMode() {
        for (TestDatabase database : List.of(TestDatabase.sqliteFile(folder.resolve("owned")),
                TestDatabase.sqlitePool(folder.resolve("pooled")))) {
            try (database; JdbiChatStore store = database.store().build()) {
                store.createThread(thread("t"));
                String mode = Jdbi.create(database.dataSource()).withHandle(h -> h.createQuery("PRAGMA journal_mode")
                        .mapTo(String.class).one());
                assertThat(mode).as(database.toString()).isEqualTo("wal");
            }
        }
    }

    @Test
    void readsDoNotWaitForAnotherWriterAndWritesWaitTheirTurn() throws Exception {
        try (TestDatabase database = TestDatabase.sqliteFile(folder); JdbiChatStore store = database.store().build();
                Connection other = database.dataSource().getConnection(); Statement otherProcess = other.createStatement()) {
            store.createThread(thread("t1"));
            otherProcess.execute("BEGIN IMMEDIATE");
            otherProcess.execute("UPDATE parley_threads SET title = 'uncommitted' WHERE id = 't1'");

            ChatThread read = CompletableFuture.supplyAsync(() -> store.findThread("t1").orElseThrow())
                    .get(1, TimeUnit.SECONDS);
            assertThat(read.title()).as("the committed state, without waiting").isNull();

            CompletableFuture<Void> write = CompletableFuture.runAsync(() -> store.createThread(thread("t2")));
            assertThatThrownBy(() -> write.get(300, TimeUnit.MILLISECONDS)).isInstanceOf(TimeoutException.class);
            otherProcess.execute("COMMIT");
            write.get(5, TimeUnit.SECONDS);
            assertThat(store.findThread("t2")).isPresent();
            assertThat(store.findThread("t1").orElseThrow().title()).isEqualTo("uncommitted");
        }
    }

    @Test
    void aNegativeBusyTimeoutIsAConfigurationError() {
        assertThatThrownBy(() -> JdbiChatStore.sqlite(folder.resolve("never.db")).busyTimeout(Duration.ofMillis(-1)))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIGURATION))
                .hasMessageContaining("busyTimeout must not be negative");
        assertThat(folder.resolve("never.db")).doesNotExist();
    }

    @Test
    void aWriterHeldLongerThanTheBusyTimeoutFailsTheWrite() throws Exception {
        try (TestDatabase database = TestDatabase.sqliteFile(folder);
                JdbiChatStore store = database.store().busyTimeout(Duration.ofMillis(300)).build();
                Connection other = database.dataSource().getConnection(); Statement otherProcess = other.createStatement()) {
            otherProcess.execute("BEGIN IMMEDIATE");
            long started = System.nanoTime();
            assertThatThrownBy(() -> store.createThread(thread("t1")))
                    .isInstanceOfSatisfying(ChatException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILURE);
                        assertThat(e.getCause()).hasStackTraceContaining("SQLITE_BUSY");
                    });
            assertThat(Duration.ofNanos(System.nanoTime() - started)).isGreaterThanOrEqualTo(Duration.ofMillis(250));
            otherProcess.execute("ROLLBACK");
            store.createThread(thread("t1"));
        }
    }

    @Test
    void concurrentWritersAndReadersInOneProcessNeverCollide() throws Exception {
        for (TestDatabase database : List.of(TestDatabase.sqliteFile(folder.resolve("owned")),
                TestDatabase.sqlitePool(folder.resolve("pooled")))) {
            try (database; JdbiChatStore store = database.store().build()) {
                store.createThread(thread("t"));
                for (int writer = 0; writer < 8; writer++) {
                    store.write(StoreBatch.builder().run(StoreBehaviourTest.run("r" + writer, "t")
                            .withStatus(dev.parley.chat.model.RunStatus.SUCCEEDED)).build());
                }
                List<Integer> done = Await.race(8, writer -> {
                    String runId = "r" + writer;
                    for (int flush = 0; flush < 40; flush++) {
                        int first = flush * 10 + 1;
                        store.write(StoreBatch.builder().events(IntStream.range(first, first + 10)
                                .mapToObj(seq -> new RunEvent(runId, seq, seq, new AgentStreamEvent.TextDelta("m", "x")))
                                .collect(Collectors.toList())).build());
                        store.reserveSeq(runId, first + 4096);
                        assertThat(store.lastSeq(runId)).isEqualTo(first + 9);
                        store.listThreads("alice", null, 10);
                    }
                    return writer;
                });
                List<Long> lastSeqs = new ArrayList<>();
                for (int writer : done) {
                    lastSeqs.add(store.lastSeq("r" + writer));
                }
                assertThat(lastSeqs).as(database.toString()).containsOnly(400L);
            }
        }
    }
}
