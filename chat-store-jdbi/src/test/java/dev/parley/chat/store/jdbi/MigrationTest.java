package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.input.InputState;
import dev.parley.chat.store.StoreBatch;
import java.time.Instant;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationVersion;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Parley's Flyway migrations: their own history and location, at start-up or left to the host. */
abstract class MigrationTest {
    private static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");
    TestDatabase database;

    abstract TestDatabase createDatabase();

    @BeforeEach
    void openDatabase() {
        database = createDatabase();
    }

    @AfterEach
    void closeDatabase() {
        database.close();
    }

    private Flyway parleyFlyway() {
        return parleyFlyway(MigrationVersion.LATEST);
    }

    /** Parley's migrations up to {@code target}, as an older version of Parley would have left them. */
    private Flyway parleyFlyway(MigrationVersion target) {
        return Flyway.configure().dataSource(database.dataSource()).table(ParleyMigrations.HISTORY_TABLE)
                .locations(ParleyMigrations.location(database.kind())).target(target).load();
    }

    private static List<String> versions(MigrationInfo[] infos) {
        return Arrays.stream(infos).map(info -> info.getVersion().getVersion()).collect(Collectors.toList());
    }

    @Test
    void theStoreKeepsItsOwnHistoryBesideTheHosts() {
        Flyway host = Flyway.configure().dataSource(database.dataSource()).locations("classpath:db/host-migration").load();
        host.migrate();

        try (JdbiChatStore store = database.store().build()) {
            store.createThread(new ChatThread("t1", "alice", null, null, null, null, ThreadStatus.ACTIVE, T0, T0));
            assertThat(store.findThread("t1")).isPresent();
        }
        try (JdbiChatStore again = database.store().build()) {
            assertThat(again.findThread("t1")).as("a second start migrates nothing away").isPresent();
        }

        MigrationInfo[] parley = parleyFlyway().info().applied();
        assertThat(versions(parley)).as("a baseline under the host's tables, then Parley's versions")
                .containsExactly("0", "1", "2", "3", "4", "5");
        assertThat(parley[1].getScript()).isEqualTo("V1__parley_tables.sql");
        assertThat(parley[1].getState().isFailed()).isFalse();
        assertThat(host.info().applied()).extracting(MigrationInfo::getScript).containsExactly("V1__host_orders.sql");
        assertThat(host.validateWithResult().validationSuccessful).as("the host's history is untouched").isTrue();
        assertThat(host.info().pending()).isEmpty();
        Jdbi.create(database.dataSource()).useHandle(h -> {
            h.execute("INSERT INTO host_orders (id, note) VALUES (1, 'still mine')");
            assertThat(h.createQuery("SELECT COUNT(*) FROM parley_schema_history").mapTo(Integer.class).one()).isEqualTo(6);
            assertThat(h.createQuery("SELECT COUNT(*) FROM flyway_schema_history").mapTo(Integer.class).one()).isEqualTo(1);
        });
    }

    @Test
    void migrationsCanBeLeftToTheHost() {
        assertThatThrownBy(() -> database.store().migrate(false).build())
                .isInstanceOfSatisfying(ChatException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILURE);
                    assertThat(e.getMessage()).contains("parley_threads", "ParleyMigrations");
                });
        assertThat(parleyFlyway().info().applied()).as("nothing was migrated").isEmpty();

        ParleyMigrations.migrate(database.dataSource());
        ParleyMigrations.migrate(database.dataSource());
        assertThat(versions(parleyFlyway().info().applied())).containsExactly("1", "2", "3", "4", "5");

        try (JdbiChatStore store = database.store().migrate(false).build()) {
            store.createThread(new ChatThread("t1", "alice", null, null, null, null, ThreadStatus.ACTIVE, T0, T0));
            assertThat(store.findThread("t1")).isPresent();
        }
    }

    /**
     * A store that skipped version 3 would not keep a thread to one active run across instances: with
     * migrations left to the host, build() refuses it.
     */
    @Test
    void aHostThatLeftOutALaterMigrationIsToldSo() {
        parleyFlyway(MigrationVersion.fromVersion("2")).migrate();
        assertThatThrownBy(() -> database.store().migrate(false).build())
                .isInstanceOfSatisfying(ChatException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILURE);
                    assertThat(e.getMessage()).contains("parley_inputs", "ParleyMigrations");
                });
        parleyFlyway(MigrationVersion.fromVersion("3")).migrate();
        assertThatThrownBy(() -> database.store().migrate(false).build())
                .as("without version 4 (pending inputs)")
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.getMessage())
                        .contains("parley_inputs", "ParleyMigrations"));
    }

    /**
     * Before version 3 two instances could both start a run on one thread. The migration that makes the
     * database refuse that keeps each thread's newest active run and ends the older ones as INTERRUPTED
     * (closing their pending clarifies), the way the engine ends a run whose host stopped.
     */
    @Test
    void theOneActiveRunMigrationResolvesThreadsThatHaveSeveral() {
        parleyFlyway(MigrationVersion.fromVersion("2")).migrate();
        Instant before = Instant.now();
        Jdbi.create(database.dataSource()).useHandle(h -> {
            for (String thread : List.of("t", "t2")) {
                h.createUpdate("INSERT INTO parley_threads (id, owner_id, status, created_at, last_message_at) "
                        + "VALUES (:id, 'alice', 'ACTIVE', 0, 0)").bind("id", thread).execute();
            }
            String[][] runs = {
                {"old-running", "t", "RUNNING"}, {"old-waiting", "t", "WAITING_FOR_INPUT"}, {"done", "t", "SUCCEEDED"},
                {"newest", "t", "RUNNING"}, {"queued", "t", "QUEUED"}, {"alone", "t2", "WAITING_FOR_INPUT"}};
            for (String[] run : runs) {
                h.createUpdate("INSERT INTO parley_runs (id, thread_id, owner_id, status, assistant_message_id, input, "
                        + "context, created_at, lease_owner, lease_until) "
                        + "VALUES (:id, :threadId, 'alice', :status, :id, 'hi', '{}', 0, 'host-a', 0)")
                        .bind("id", run[0]).bind("threadId", run[1]).bind("status", run[2]).execute();
            }
            for (String run : List.of("old-waiting", "alone")) {
                h.createUpdate("INSERT INTO parley_clarifies (run_id, clarify_id, message_id, question, choices, "
                        + "multi_select, state, answer, created_at) "
                        + "VALUES (:runId, 'c1', 'm', 'Which?', '[]', FALSE, 'PENDING', '[]', 0)").bind("runId", run).execute();
            }
        });

        try (JdbiChatStore store = database.store().build()) {
            assertThat(store.findRun("newest").orElseThrow().status()).isEqualTo(RunStatus.RUNNING);
            for (String older : List.of("old-running", "old-waiting")) {
                Run run = store.findRun(older).orElseThrow();
                assertThat(run.status()).as(older).isEqualTo(RunStatus.INTERRUPTED);
                assertThat(run.finishedAt()).as(older).isBetween(before.minusSeconds(1), Instant.now().plusSeconds(1));
                assertThat(run.error().code()).isEqualTo("INTERRUPTED");
                assertThat(run.error().message()).contains("another run of the thread");
            }
            assertThat(store.findInput("old-waiting", "c1").orElseThrow().state()).isEqualTo(InputState.CANCELLED);
            assertThat(store.findRun("alone").orElseThrow().status()).as("a thread with one active run keeps it")
                    .isEqualTo(RunStatus.WAITING_FOR_INPUT);
            assertThat(store.findInput("alone", "c1").orElseThrow().state()).isEqualTo(InputState.PENDING);
            assertThat(store.findRun("done").orElseThrow().status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(store.findRun("done").orElseThrow().error()).isNull();
            assertThat(store.findRun("queued").orElseThrow().status()).isEqualTo(RunStatus.QUEUED);

            Run another = new Run("another", "t", "alice", RunStatus.RUNNING, null, "another-a", "hi", null, null, null,
                    java.util.Map.of(), T0, T0, null, null, null, null);
            assertThatThrownBy(() -> store.write(StoreBatch.builder().run(another).build()))
                    .as("from now on the database refuses a second active run")
                    .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT));
        }
    }

    @Test
    void theScriptsAreListedInOrderAndAreWhatFlywayApplies() {
        List<String> scripts = ParleyMigrations.scripts(database.kind());
        String location = ParleyMigrations.location(database.kind());
        assertThat(location).isEqualTo("classpath:dev/parley/chat/store/jdbi/migration/"
                + database.kind().name().toLowerCase(java.util.Locale.ROOT));
        for (String script : scripts) {
            assertThat(script).startsWith(location.substring("classpath:".length()) + "/");
            assertThat(getClass().getClassLoader().getResource(script)).as(script).isNotNull();
        }
        ParleyMigrations.migrate(database.dataSource());
        assertThat(parleyFlyway().info().applied()).extracting(MigrationInfo::getScript)
                .containsExactlyElementsOf(scripts.stream().map(s -> s.substring(s.lastIndexOf('/') + 1))
                        .collect(Collectors.toList()));
    }
}
