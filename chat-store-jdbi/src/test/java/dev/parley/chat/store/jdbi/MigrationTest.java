package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.input.InputState;
import dev.parley.chat.store.SearchQuery;
import dev.parley.chat.store.StoreBatch;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.Collectors;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.MigrationInfo;
import org.flywaydb.core.api.MigrationVersion;
import org.jdbi.v3.core.Handle;
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
                .containsExactly("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13");
        assertThat(parley[1].getScript()).isEqualTo("V1__parley_tables.sql");
        assertThat(parley[1].getState().isFailed()).isFalse();
        assertThat(host.info().applied()).extracting(MigrationInfo::getScript).containsExactly("V1__host_orders.sql");
        assertThat(host.validateWithResult().validationSuccessful).as("the host's history is untouched").isTrue();
        assertThat(host.info().pending()).isEmpty();
        Jdbi.create(database.dataSource()).useHandle(h -> {
            h.execute("INSERT INTO host_orders (id, note) VALUES (1, 'still mine')");
            assertThat(h.createQuery("SELECT COUNT(*) FROM parley_schema_history").mapTo(Integer.class).one()).isEqualTo(14);
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
        assertThat(versions(parleyFlyway().info().applied()))
                .containsExactly("1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13");

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
        parleyFlyway(MigrationVersion.fromVersion("4")).migrate();
        assertThatThrownBy(() -> database.store().migrate(false).build())
                .as("without version 5 (trees, client ids, search)")
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.getMessage())
                        .contains("older than this version", "ParleyMigrations"));
        parleyFlyway(MigrationVersion.fromVersion("5")).migrate();
        assertThatThrownBy(() -> database.store().migrate(false).build())
                .as("without version 6 (compact event rows)")
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.getMessage())
                        .contains("older than this version", "ParleyMigrations"));
        parleyFlyway(MigrationVersion.fromVersion("6")).migrate();
        assertThatThrownBy(() -> database.store().migrate(false).build())
                .as("without version 7 (foreign keys)")
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.getMessage())
                        .contains("older than this version", "foreign keys", "ParleyMigrations"));
        parleyFlyway(MigrationVersion.fromVersion("7")).migrate();
        assertThatThrownBy(() -> database.store().migrate(false).build())
                .as("without version 8 (a run error's retry hint)")
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.getMessage())
                        .contains("older than this version", "error_retry_after_seconds", "ParleyMigrations"));
        parleyFlyway(MigrationVersion.fromVersion("8")).migrate();
        assertThatThrownBy(() -> database.store().migrate(false).build())
                .as("without version 9 (resume points)")
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.getMessage())
                        .contains("older than this version", "parley_resume_points", "ParleyMigrations"));
        parleyFlyway(MigrationVersion.fromVersion("9")).migrate();
        assertThatThrownBy(() -> database.store().migrate(false).build())
                .as("without version 10 (attachments)")
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.getMessage())
                        .contains("older than this version", "parley_attachments", "ParleyMigrations"));
        parleyFlyway(MigrationVersion.fromVersion("10")).migrate();
        assertThatThrownBy(() -> database.store().migrate(false).build())
                .as("without version 11 (search by owner, newest first)")
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.getMessage())
                        .contains("older than this version", "version 11", "ParleyMigrations"));
        parleyFlyway(MigrationVersion.fromVersion("11")).migrate();
        assertThatThrownBy(() -> database.store().migrate(false).build())
                .as("without version 12 (the outbox)")
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.getMessage())
                        .contains("older than this version", "parley_outbox", "version 12", "ParleyMigrations"));
    }

    /** A thread with one run, in the columns every version from 5 on has (no store of that version is at hand). */
    private static void insertThreadWithRun(Handle h, String threadId, String runId) {
        h.createUpdate("INSERT INTO parley_threads (id, owner_id, status, created_at, last_message_at) "
                + "VALUES (:id, 'alice', 'ACTIVE', 0, 0)").bind("id", threadId).execute();
        h.createUpdate("INSERT INTO parley_runs (id, thread_id, owner_id, status, assistant_message_id, input, context, "
                + "created_at) VALUES (:id, :threadId, 'alice', 'SUCCEEDED', :id || '-a', 'q', '{}', 0)")
                .bind("id", runId).bind("threadId", threadId).execute();
    }

    /**
     * A version-6 database holding, beside a whole thread, rows an older version could leave behind: rows of
     * a deleted thread, and rows of a run that does not exist. Version 7 deletes those orphans (the new
     * foreign keys would refuse them), keeps every row of the thread, and from then on a thread's delete
     * takes all of its rows and a late write of its run is refused.
     */
    @Test
    void version7DeletesOrphanedRowsKeepsTheRestAndMakesDeletesFinal() {
        parleyFlyway(MigrationVersion.fromVersion("6")).migrate();
        Jdbi direct = Jdbi.create(database.dataSource());
        direct.useHandle(h -> {
            insertThreadWithRun(h, "t1", "r1");
            insertThreadWithRun(h, "gone-t", "gone-r");
            h.execute("DELETE FROM parley_threads WHERE id = 'gone-t'");
            insertRowsOf(h, "t1", "r1", "t1");
            insertRowsOf(h, "gone-t", "gone-r", "gone-m");
            insertRowsOf(h, "t1", "no-such-run", "no-such-m");
        });
        List<String> rowsOfRuns = List.of("parley_run_events", "parley_seq_reservations", "parley_inputs",
                "parley_host_actions");
        List<String> rowsOfThreads = List.of("parley_runs", "parley_messages", "parley_feedback", "parley_thread_approvals");
        List<String> tables = new ArrayList<>(rowsOfRuns);
        tables.addAll(rowsOfThreads);

        try (JdbiChatStore store = database.store().build()) {
            for (String table : tables) {
                assertThat(rowsNaming(direct, table, "gone")).as(table).isZero();
                assertThat(rowsNaming(direct, table, "t1") + rowsNaming(direct, table, "r1")).as(table).isPositive();
            }
            for (String table : rowsOfRuns) {
                assertThat(rowsNaming(direct, table, "no-such")).as(table).isZero();
            }
            assertThat(rowsNaming(direct, "parley_messages", "no-such")).as("a message may come before its run")
                    .isEqualTo(1);
            assertThat(store.findRun("r1")).isPresent();
            assertThat(store.reservedSeq("r1")).isEqualTo(10);
            assertThat(store.isApprovedForThread("t1", "tool-t1")).isTrue();

            assertThat(store.deleteThread("t1")).isTrue();
            for (String table : tables) {
                assertThat(rowsNaming(direct, table, "t1") + rowsNaming(direct, table, "r1")).as(table).isZero();
            }
            assertThatThrownBy(() -> store.write(StoreBatch.builder().event(new RunEvent("r1", 9, 0,
                    new AgentStreamEvent.TextDelta("a", "late"))).build()))
                    .isInstanceOf(dev.parley.chat.store.ThreadGoneException.class);
        }
    }

    /** One row of each table naming the thread, the run and the message. */
    private static void insertRowsOf(Handle h, String threadId, String runId, String messageId) {
        h.createUpdate("INSERT INTO parley_messages (id, thread_id, run_id, kind, top_level, status, created_at, body) "
                + "VALUES (:m, :t, :r, 'thinking', FALSE, 'COMPLETED', 0, '{}')")
                .bind("m", messageId + "-msg").bind("t", threadId).bind("r", runId).execute();
        h.createUpdate("INSERT INTO parley_run_events (run_id, seq, created_at, type, payload) VALUES (:r, 1, 0, 'x', '{}')")
                .bind("r", runId).execute();
        h.createUpdate("INSERT INTO parley_seq_reservations (run_id, reserved_seq) VALUES (:r, 10)").bind("r", runId)
                .execute();
        h.createUpdate("INSERT INTO parley_inputs (run_id, input_id, message_id, kind, request, state, created_at) "
                + "VALUES (:r, 'c1', :m, 'clarify', '{}', 'PENDING', 0)").bind("r", runId).bind("m", messageId).execute();
        h.createUpdate("INSERT INTO parley_host_actions (run_id, execution_id, name, arguments, error, claimed_at) "
                + "VALUES (:r, 'x1', 'lookup', '{}', FALSE, 0)").bind("r", runId).execute();
        h.createUpdate("INSERT INTO parley_feedback (message_id, owner_id, thread_id, run_id, rating, created_at) "
                + "VALUES (:m, 'alice', :t, :r, 'UP', 0)").bind("m", messageId + "-fb").bind("t", threadId)
                .bind("r", runId).execute();
        h.createUpdate("INSERT INTO parley_thread_approvals (thread_id, tool_name, approved_at) VALUES (:t, :tool, 0) "
                + "ON CONFLICT DO NOTHING").bind("t", threadId).bind("tool", "tool-" + messageId).execute();
    }

    /** Rows of a table with a column holding {@code part}. */
    private static long rowsNaming(Jdbi direct, String table, String part) {
        return direct.withHandle(h -> h.createQuery("SELECT * FROM " + table).mapToMap().list()).stream()
                .filter(row -> row.values().stream().anyMatch(v -> String.valueOf(v).contains(part))).count();
    }

    /**
     * A database of version 5 with a run's events stored one per row, as version 5 stored them (the same
     * statement, each event's JSON), upgraded to version 6: every event reads back exactly from every cursor,
     * nothing is rewritten, and what the run stores next (compact rows) follows on, a repeat of an old seq
     * left out.
     */
    @Test
    void version6ReadsTheEventsVersion5StoredOnePerRow() {
        parleyFlyway(MigrationVersion.fromVersion("5")).migrate();
        List<RunEvent> old = new ArrayList<>();
        old.add(new RunEvent("r1", 1, 100, new AgentStreamEvent.RunStarted("t1", "r1", "a1")));
        for (int i = 0; i < 30; i++) {
            old.add(new RunEvent("r1", old.size() + 1, 100 + i / 4, new AgentStreamEvent.TextDelta("a1", "word" + i + " ")));
        }
        old.add(new RunEvent("r1", old.size() + 1, 130, new AgentStreamEvent.ToolCallArgs("x1", "{\"q\": \"\u0000\"}")));
        old.add(new RunEvent("r1", old.size() + 1, 131, new AgentStreamEvent.ToolCallArgs("x1", "")));
        Jdbi.create(database.dataSource()).useHandle(h -> {
            insertThreadWithRun(h, "t1", "r1");
            for (RunEvent event : old) {
                h.createUpdate("INSERT INTO parley_run_events (run_id, seq, created_at, type, payload) "
                        + "VALUES (:runId, :seq, :createdAt, :type, :payload) ON CONFLICT (run_id, seq) DO NOTHING")
                        .bind("runId", event.runId()).bind("seq", event.seq()).bind("createdAt", event.timestamp())
                        .bind("type", event.type()).bind("payload", ChatJson.shared().write(event.event())).execute();
            }
        });

        try (JdbiChatStore store = database.store().build()) {
            assertReadsFromEveryCursor(store, old);
            List<RunEvent> next = new ArrayList<>();
            next.add(new RunEvent("r1", 20, 0, new AgentStreamEvent.TextDelta("a1", "a repeat")));
            for (int i = 0; i < 40; i++) {
                next.add(new RunEvent("r1", old.size() + 1 + i, 200 + i, new AgentStreamEvent.TextDelta("a1", "new" + i)));
            }
            store.write(StoreBatch.builder().events(next).build());
            List<RunEvent> all = new ArrayList<>(old);
            all.addAll(next.subList(1, next.size()));
            assertReadsFromEveryCursor(store, all);
            int oneEventRows = Jdbi.create(database.dataSource()).withHandle(h -> h.createQuery(
                    "SELECT COUNT(*) FROM parley_run_events WHERE first_seq IS NULL").mapTo(Integer.class).one());
            assertThat(oneEventRows).as("the old rows as they were").isEqualTo(old.size());
        }
    }

    private static void assertReadsFromEveryCursor(JdbiChatStore store, List<RunEvent> log) {
        for (int cursor = 0; cursor <= log.size(); cursor++) {
            for (int limit : new int[] {1, 3, 1000}) {
                assertThat(store.readEvents("r1", cursor, limit)).as("after %d, up to %d", cursor, limit)
                        .containsExactlyElementsOf(log.subList(cursor, Math.min(log.size(), cursor + limit)));
            }
        }
        assertThat(store.lastSeq("r1")).isEqualTo(log.size());
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

    /**
     * A database of version 4 — a conversation stored as the engine stored it then (each message following the
     * newest), another owner's thread, a finished run — upgraded to version 5: its titles and texts are
     * searchable, its messages have depths, so branches page with cursors, and what is written next follows
     * on from them.
     */
    @Test
    void version5IndexesAndPlacesWhatVersion4Stored() {
        parleyFlyway(MigrationVersion.fromVersion("4")).migrate();
        List<Message> messages = List.of(
                new UserMessage("u1", "t1", "r1", null, MessageStatus.COMPLETED, T0, "Which museums in Lisbon?"),
                new AssistantMessage("a1", "t1", "r1", "u1", MessageStatus.COMPLETED, T0, "The tile museum.", null, null),
                new ThinkingMessage("s1", "t1", "r1", "a1", MessageStatus.COMPLETED, T0, "thinking of museums"),
                new UserMessage("u2", "t1", "r2", "a1", MessageStatus.COMPLETED, T0, "And to eat? \u0000 sardines"),
                new AssistantMessage("a2", "t1", "r2", "u2", MessageStatus.COMPLETED, T0, "Pastel de nata.", null, null),
                new AssistantMessage("a2b", "t1", "r3", "u2", MessageStatus.COMPLETED, T0, "Grilled sardines.", null, null),
                new UserMessage("b1", "t2", "rb", null, MessageStatus.COMPLETED, T0, "Lisbon for Bob"));
        Jdbi.create(database.dataSource()).useHandle(h -> {
            String[][] threads = {{"t1", "alice", "Lisbon trip", "5"}, {"t2", "bob", "Porto", "6"}, {"t3", "alice", null, "7"}};
            for (String[] t : threads) {
                h.createUpdate("INSERT INTO parley_threads (id, owner_id, title, status, created_at, last_message_at) "
                        + "VALUES (:id, :owner, :title, 'ACTIVE', 0, :at)").bind("id", t[0]).bind("owner", t[1])
                        .bind("title", t[2]).bind("at", Long.parseLong(t[3])).execute();
            }
            for (Message m : messages) {
                h.createUpdate("INSERT INTO parley_messages (id, thread_id, run_id, parent_message_id, kind, top_level, "
                        + "status, created_at, body) VALUES (:id, :threadId, :runId, :parent, :kind, :topLevel, 'COMPLETED', 0, "
                        + ":body)").bind("id", m.id()).bind("threadId", m.threadId()).bind("runId", m.runId())
                        .bind("parent", m.parentMessageId()).bind("kind", m.kind().wireName())
                        .bind("topLevel", m.kind().isTopLevel()).bind("body", ChatJson.shared().write(m)).execute();
            }
            h.execute("INSERT INTO parley_runs (id, thread_id, owner_id, status, assistant_message_id, input, context, "
                    + "created_at, finished_at) VALUES ('r1', 't1', 'alice', 'SUCCEEDED', 'a1', 'hi', '{}', 0, 10)");
        });

        try (JdbiChatStore store = database.store().build()) {
            assertThat(store.searchThreads("alice", SearchQuery.of("lisbon"), 0, 10)).extracting(h -> h.thread().id())
                    .containsExactly("t1");
            assertThat(store.searchThreads("alice", SearchQuery.of("grilled sardines"), 0, 10))
                    .extracting(h -> h.messageId()).containsExactly("a2b");
            assertThat(store.searchThreads("alice", SearchQuery.of("eat sardines"), 0, 10)).as("a text with an escaped NUL")
                    .extracting(h -> h.messageId()).containsExactly("u2");
            assertThat(store.searchThreads("alice", SearchQuery.of("thinking"), 0, 10)).isEmpty();
            assertThat(store.searchThreads("bob", SearchQuery.of("porto"), 0, 10)).hasSize(1);
            assertThat(store.listBranch("t1", "a2", "u2", 10)).extracting(Message::id).containsExactly("u1", "a1");
            assertThat(store.listBranch("t1", "a2b", null, 10)).extracting(Message::id).containsExactly("u1", "a1", "u2", "a2b");
            assertThat(store.findNewestDescendant("t1", "u1")).contains("a2b");
            assertThat(store.findUserSiblingIds("t1", List.of("u2"))).containsEntry("u2", List.of("u2"));
            assertThat(store.findRunsToCompact(T0.plusSeconds(1), 10)).extracting(Run::id).containsExactly("r1");
            assertThat(store.listThreads("alice", null, 10)).extracting(ChatThread::id).containsExactly("t3", "t1");

            store.write(StoreBatch.builder().message(new UserMessage("u3", "t1", "r4", "a2", MessageStatus.COMPLETED, T0,
                    "One more", "click")).build());
            assertThat(store.listBranch("t1", "u3", "a1", 10)).extracting(Message::id).containsExactly("u1");
            store.createThread(new ChatThread("t4", "alice", "Evora", null, null, null, ThreadStatus.ACTIVE, T0, T0));
            assertThat(store.searchThreads("alice", SearchQuery.of("evora"), 0, 10)).hasSize(1);
        }
    }

    /**
     * A database of version 10 — two owners' threads with texts indexed as version 10 indexed them — upgraded to
     * version 11: each owner finds their own texts, newest match first, and never the other's; deleting a
     * thread and writing a message keep the new index exact (on SQLite FTS5's own integrity check agrees).
     */
    @Test
    void version11IndexesEachOwnersTextsStoredBeforeIt() {
        parleyFlyway(MigrationVersion.fromVersion("10")).migrate();
        boolean sqlite = database.kind() == DatabaseKind.SQLITE;
        Jdbi.create(database.dataSource()).useHandle(h -> {
            String[][] threads = {{"t1", "alice", "Lisbon trip"}, {"t2", "bob", "Lisbon too"}, {"t3", "alice", "Porto"}};
            for (String[] t : threads) {
                h.createUpdate("INSERT INTO parley_threads (id, owner_id, title, status, created_at, last_message_at"
                        + (sqlite ? "" : ", title_vector") + ") VALUES (:id, :owner, :title, 'ACTIVE', 0, 0"
                        + (sqlite ? "" : ", to_tsvector('simple', :title)") + ")")
                        .bind("id", t[0]).bind("owner", t[1]).bind("title", t[2]).execute();
            }
            List<Message> messages = List.of(
                    new UserMessage("m1", "t1", "r1", null, MessageStatus.COMPLETED, T0, "Museums in Lisbon"),
                    new UserMessage("m2", "t2", "r2", null, MessageStatus.COMPLETED, T0, "Lisbon for Bob"),
                    new UserMessage("m3", "t3", "r3", null, MessageStatus.COMPLETED, T0, "A day in Lisbon"),
                    new UserMessage("m4", "t1", "r1", "m1", MessageStatus.COMPLETED, T0, "Grilled sardines"));
            for (Message m : messages) {
                h.createUpdate("INSERT INTO parley_messages (id, thread_id, run_id, parent_message_id, kind, top_level, "
                        + "status, created_at, body, " + (sqlite ? "search_text" : "search_vector") + ") VALUES (:id, "
                        + ":threadId, :runId, :parent, 'user', TRUE, 'COMPLETED', 0, :body, "
                        + (sqlite ? ":text" : "to_tsvector('simple', :text)") + ")")
                        .bind("id", m.id()).bind("threadId", m.threadId()).bind("runId", m.runId())
                        .bind("parent", m.parentMessageId()).bind("body", ChatJson.shared().write(m))
                        .bind("text", ((UserMessage) m).text()).execute();
            }
        });

        try (JdbiChatStore store = database.store().build()) {
            assertThat(store.searchThreads("alice", SearchQuery.of("lisbon"), 0, 10))
                    .extracting(h -> h.thread().id(), h -> h.messageId())
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("t3", "m3"), org.assertj.core.groups.Tuple.tuple("t1", "m1"));
            assertThat(store.searchThreads("bob", SearchQuery.of("lisbon"), 0, 10)).extracting(h -> h.thread().id())
                    .containsExactly("t2");
            assertThat(store.searchThreads("alice", SearchQuery.of("porto"), 0, 10)).extracting(h -> h.messageId())
                    .as("a title").containsExactly((String) null);
            store.deleteThread("t1");
            assertThat(store.searchThreads("alice", SearchQuery.of("lisbon"), 0, 10)).extracting(h -> h.thread().id())
                    .containsExactly("t3");
            assertThat(store.searchThreads("alice", SearchQuery.of("sardines"), 0, 10)).isEmpty();
            store.write(StoreBatch.builder().message(new UserMessage("m5", "t3", "r5", "m3", MessageStatus.COMPLETED, T0,
                    "Sardines at last")).build());
            assertThat(store.searchThreads("alice", SearchQuery.of("sardines"), 0, 10)).extracting(h -> h.messageId())
                    .containsExactly("m5");
            assertThat(store.searchThreads("bob", SearchQuery.of("sardines"), 0, 10)).isEmpty();
        }
        if (sqlite) {
            Jdbi.create(database.dataSource()).useHandle(h -> {
                h.execute("INSERT INTO parley_message_search (parley_message_search) VALUES ('integrity-check')");
                h.execute("INSERT INTO parley_title_search (parley_title_search) VALUES ('integrity-check')");
            });
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
