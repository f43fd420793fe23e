package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadGoneException;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/**
 * On PostgreSQL: besides the rows, what a delete leaves in the files until a VACUUM, and
 * {@link JdbiChatStore#reclaimErasedSpace}.
 */
class PostgresErasureTest extends ErasureTest {
    @Override
    TestDatabase createDatabase() {
        return TestDatabase.postgres();
    }

    @Override
    List<String> parleyTables(Handle handle) {
        return handle.createQuery("SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() "
                + "AND table_name LIKE 'parley%' AND table_name <> 'parley_schema_history'").mapTo(String.class).list();
    }

    /**
     * A delete leaves the rows' versions in the table files (dead tuples, read with pgstattuple) until a
     * VACUUM: {@code Reclaim.VACUUM} removes them from every Parley table; {@code Reclaim.REWRITE} writes
     * the tables anew, after which no file of the database holds a byte of the erased words.
     */
    @Test
    void reclaimingVacuumsTheDeadRowsAndARewriteLeavesNoByteInTheDatabaseFiles() throws IOException {
        writeThread("erased-t", erasedWord);
        writeThread("kept-t", keptWord);
        assertThat(store.deleteThread("erased-t")).isTrue();
        purgeUnreferencedBlobs();
        Jdbi jdbi = Jdbi.create(database.dataSource());
        jdbi.useHandle(h -> h.execute("CREATE EXTENSION IF NOT EXISTS pgstattuple SCHEMA public"));

        assertThat(deadTuples(jdbi).get("parley_messages")).as("until a VACUUM").isPositive();
        assertThat(holding(databaseFiles(jdbi), erasedWord)).as("until a VACUUM the files hold the words")
                .isNotEmpty();

        store.reclaimErasedSpace(JdbiChatStore.Reclaim.VACUUM);
        assertThat(deadTuples(jdbi)).as("dead row versions per table").allSatisfy((table, dead) -> assertThat(dead)
                .as(table).isZero());

        store.reclaimErasedSpace(JdbiChatStore.Reclaim.REWRITE);
        Map<String, byte[]> files = databaseFiles(jdbi);
        assertThat(holding(files, keptWord)).as("the control: the kept thread's words are found").isNotEmpty();
        assertThat(holding(files, erasedWord)).as("files holding the erased words").isEmpty();
        assertThat(store.findThread("kept-t")).isPresent();
    }

    /**
     * A run flushing as the engine does (its run row, a new step message, events) while its thread is
     * deleted, from another instance's store: the delete succeeds, each flush either committed before it
     * or fails after it with ThreadGoneException (never a deadlock: the batch locks the thread's row
     * before its run's and messages', as the delete does), and no row of the thread is left.
     */
    @Test
    void aRunFlushingWhileItsThreadIsDeletedLeavesNothing() throws Exception {
        JdbiChatStore other = database.store().build();
        Jdbi jdbi = Jdbi.create(database.dataSource());
        try {
            for (int round = 0; round < 10; round++) {
                String threadId = "race-" + round;
                writeThread(threadId, "xrace" + round + "words");
                String runId = threadId + "-r";
                CountDownLatch flushing = new CountDownLatch(1);
                CompletableFuture<RuntimeException> writer =
                        CompletableFuture.supplyAsync(() -> {
                            for (int flush = 0; ; flush++) {
                                long seq = 100 + flush * 10L;
                                StoreBatch.Builder batch = StoreBatch.builder()
                                        .run(new Run(runId, threadId, "alice",
                                                RunStatus.RUNNING, runId + "-u", runId + "-a",
                                                "flush " + flush, null, null, null, Map.of(), T0, T0, null, null, null,
                                                null))
                                        .message(new ThinkingMessage(runId + "-s" + flush, threadId,
                                                runId, runId + "-a", MessageStatus.COMPLETED, T0,
                                                "step " + flush));
                                for (long s = seq; s < seq + 10; s++) {
                                    batch.event(new RunEvent(runId, s, s,
                                            new AgentStreamEvent.TextDelta(runId + "-a", "d")));
                                }
                                try {
                                    store.write(batch.build());
                                } catch (RuntimeException e) {
                                    return e;
                                } finally {
                                    flushing.countDown();
                                }
                            }
                        });
                flushing.await();
                assertThat(other.deleteThread(threadId)).isTrue();
                RuntimeException end = writer.get(30, TimeUnit.SECONDS);
                assertThat(end).isInstanceOfSatisfying(ThreadGoneException.class,
                        e -> assertThat(e.runIds()).containsExactly(runId));
                for (String table : jdbi.withHandle(this::parleyTables)) {
                    long left = jdbi.withHandle(h -> h.createQuery("SELECT * FROM " + table).mapToMap().list()).stream()
                            .filter(row -> row.values().stream().anyMatch(v -> String.valueOf(v).contains(threadId)))
                            .count();
                    assertThat(left).as("%s rows of %s", table, threadId).isZero();
                }
            }
        } finally {
            other.close();
        }
    }

    private static Map<String, Long> deadTuples(Jdbi jdbi) {
        Map<String, Long> dead = new LinkedHashMap<>();
        jdbi.useHandle(h -> {
            for (String table : h.createQuery("SELECT table_name FROM information_schema.tables "
                    + "WHERE table_schema = current_schema() AND table_name LIKE 'parley%'").mapTo(String.class).list()) {
                dead.put(table, h.createQuery("SELECT dead_tuple_count FROM public.pgstattuple(CAST(:t AS regclass))")
                        .bind("t", table).mapTo(Long.class).one());
            }
        });
        return dead;
    }

    /** Every file of the database's directory (all its tables, indexes and TOAST), after a checkpoint. */
    private static Map<String, byte[]> databaseFiles(Jdbi jdbi) throws IOException {
        Path directory = jdbi.withHandle(h -> {
            h.execute("CHECKPOINT");
            String dataDirectory = h.createQuery("SHOW data_directory").mapTo(String.class).one();
            String table = h.createQuery("SELECT pg_relation_filepath('parley_messages')").mapTo(String.class).one();
            return Path.of(dataDirectory).resolve(table).getParent();
        });
        Map<String, byte[]> files = new LinkedHashMap<>();
        try (Stream<Path> paths = Files.list(directory)) {
            for (Path path : paths.filter(Files::isRegularFile).toList()) {
                try {
                    files.put(path.getFileName().toString(), Files.readAllBytes(path));
                } catch (java.nio.file.NoSuchFileException vanished) {
                    // PostgreSQL removes a cache file (pg_internal.init) when its catalog changes: it held no rows
                }
            }
        }
        return files;
    }
}
