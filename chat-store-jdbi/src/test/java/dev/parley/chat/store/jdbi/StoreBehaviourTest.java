package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.store.AnswerOutcome;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.store.HostActionRecord;
import dev.parley.chat.store.LeaseLostException;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadTouch;
import dev.parley.chat.testing.Await;
import java.sql.SQLException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jdbi.v3.core.Jdbi;
import org.jdbi.v3.core.JdbiException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What the store promises beyond the core contract: atomic batches, JDBC batching, failures, races between stores. */
abstract class StoreBehaviourTest {
    static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");
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

    static ChatThread thread(String id) {
        return new ChatThread(id, "alice", null, null, null, null, ThreadStatus.ACTIVE, T0, T0);
    }

    static Run run(String id, String threadId) {
        return new Run(id, threadId, "alice", RunStatus.RUNNING, id + "-u", id + "-a", "hello", null, null, null,
                Map.of(), T0, T0, null, null, null, null);
    }

    private static PendingInput clarify(String runId) {
        return new PendingInput(runId, "c1", runId + ":c1", new ClarifyRequest("Which?", List.of("a", "b"), false), null,
                null, InputState.PENDING, null, T0, null);
    }

    /**
     * A flush as the engine makes it: a touch, runs, messages, hundreds of events, a clarify. The first run
     * is RUNNING, the others are queued behind it (a thread has one active run at most).
     */
    private static StoreBatch flush(String threadId, String... runIds) {
        StoreBatch.Builder batch = StoreBatch.builder()
                .touch(new ThreadTouch(threadId, "sess-" + runIds[0], T0.plusSeconds(60), "Hi"));
        for (String runId : runIds) {
            Run run = run(runId, threadId);
            batch.run(runId.equals(runIds[0]) ? run : new Run(runId, threadId, "alice", RunStatus.QUEUED, run.userMessageId(),
                    run.assistantMessageId(), run.input(), null, null, null, Map.of(), T0, null, null, null, null, null))
                    .message(new UserMessage(runId + "-u", threadId, runId, null, MessageStatus.COMPLETED, T0, "hi"))
                    .message(new AssistantMessage(runId + "-a", threadId, runId, runId + "-u", MessageStatus.IN_PROGRESS,
                            T0, "partial", null, null));
            for (int i = 0; i < 20; i++) {
                batch.message(new ThinkingMessage(runId + "-t" + i, threadId, runId, runId + "-a",
                        MessageStatus.IN_PROGRESS, T0, "step " + i));
            }
            for (int seq = 1; seq <= 250; seq++) {
                batch.event(new RunEvent(runId, seq, T0.toEpochMilli() + seq, new AgentStreamEvent.TextDelta(runId + "-a", "t")));
            }
            batch.input(clarify(runId));
        }
        return batch.build();
    }

    @Test
    void eachKindInABatchIsOneRoundTripInOneTransaction() {
        JdbcSpy spy = JdbcSpy.counting();
        try (JdbiChatStore store = JdbiChatStore.builder(spy.wrap(database.dataSource())).build()) {
            store.createThread(thread("t"));
            spy.reset();
            store.write(flush("t", "r1", "r2"));

            // PostgreSQL takes the events as one statement over arrays; SQLite as a JDBC batch
            boolean eventArrays = store.databaseKind() == DatabaseKind.POSTGRESQL;
            // and the runs' last stored seqs are one query; each run's 250 deltas are one row
            assertThat(spy.count("Connection.prepareStatement")).as("one statement per kind").isEqualTo(6);
            assertThat(spy.count("PreparedStatement.addBatch")).isEqualTo(1 + 2 + 2 * 22 + (eventArrays ? 0 : 2) + 2);
            assertThat(spy.count("PreparedStatement.executeBatch")).as("one round trip per kind")
                    .isEqualTo(eventArrays ? 4 : 5);
            assertThat(spy.count("PreparedStatement.execute") + spy.count("PreparedStatement.executeUpdate")
                    + spy.count("PreparedStatement.executeQuery")).isEqualTo(eventArrays ? 2 : 1);
            assertThat(spy.count("Connection.commit")).isEqualTo(1);
            assertThat(store.readEvents("r2", 0, 1000)).hasSize(250);
            assertThat(store.listNewestStepMessages(List.of("r1", "r2"), 100)).hasSize(40);
        }
    }

    /**
     * The steps of a run of 5 000 are read bounded at the driver: each run's newest cost their limit in rows,
     * a page after a cursor its page, a count one row per run.
     */
    @Test
    void aLongRunsStepsCostTheRowsAskedFor() {
        JdbcSpy spy = JdbcSpy.counting();
        try (JdbiChatStore store = JdbiChatStore.builder(spy.wrap(database.dataSource())).build()) {
            store.createThread(thread("t"));
            for (int from = 0; from < 5_000; from += 1_000) {
                StoreBatch.Builder batch = StoreBatch.builder();
                for (int i = from; i < from + 1_000; i++) {
                    batch.message(new ThinkingMessage("long-s" + i, "t", "long", "long-a", MessageStatus.COMPLETED, T0,
                            "step " + i));
                }
                store.write(batch.build());
            }
            store.write(StoreBatch.builder().message(new AssistantMessage("long-a", "t", "long", null,
                    MessageStatus.COMPLETED, T0, "done", null, null)).message(new ThinkingMessage("short-s", "t", "short",
                    "short-a", MessageStatus.COMPLETED, T0, "one step")).build());

            spy.reset();
            assertThat(store.listNewestStepMessages(List.of("long", "short"), 10)).extracting(m -> m.id())
                    .startsWith("long-s4990").endsWith("long-s4999", "short-s").hasSize(11);
            assertThat(spy.count("ResultSet.row")).as("rows the driver handed over").isEqualTo(11);

            spy.reset();
            assertThat(store.listStepMessagesAfter("long", "long-s100", 50)).extracting(m -> m.id())
                    .startsWith("long-s101").endsWith("long-s150").hasSize(50);
            assertThat(spy.count("ResultSet.row")).isEqualTo(50);

            spy.reset();
            assertThat(store.countStepMessages(List.of("long", "short"))).isEqualTo(Map.of("long", 5_000, "short", 1));
            assertThat(spy.count("ResultSet.row")).isEqualTo(2);
        }
    }

    @Test
    void aBacklogOfManyThousandEventsIsStoredInOrderInOneWrite() {
        try (JdbiChatStore store = database.store().build()) {
            store.createThread(thread("t"));
            StoreBatch.Builder batch = StoreBatch.builder().run(run("r", "t"));
            for (int seq = 1; seq <= 10_000; seq++) {
                batch.event(new RunEvent("r", seq, T0.toEpochMilli() + seq, new AgentStreamEvent.TextDelta("r-a", "t" + seq)));
            }
            store.write(batch.build());
            store.write(StoreBatch.builder().event(new RunEvent("r", 5_000, T0.toEpochMilli(),
                    new AgentStreamEvent.TextDelta("r-a", "a repeat is ignored"))).build());

            assertThat(store.lastSeq("r")).isEqualTo(10_000);
            List<RunEvent> middle = store.readEvents("r", 4_095, 3);
            assertThat(middle).extracting(RunEvent::seq).containsExactly(4_096L, 4_097L, 4_098L);
            assertThat(((AgentStreamEvent.TextDelta) middle.get(1).event()).delta()).isEqualTo("t4097");
            assertThat(store.readEvents("r", 4_999, 1).get(0).timestamp()).isEqualTo(T0.toEpochMilli() + 5_000);
        }
    }

    @Test
    void aBatchIsStoredWholeOrNotAtAll() {
        try (JdbiChatStore store = database.store().build()) {
            store.createThread(thread("t"));
            store.write(flush("t", "r0"));
            store.write(StoreBatch.builder().run(run("r0", "t").finished(RunStatus.SUCCEEDED, T0, null, null, null)).build());
            Jdbi.create(database.dataSource()).useHandle(h -> h.execute("DROP TABLE parley_inputs"));

            assertThatThrownBy(() -> store.write(flush("t", "r1")))
                    .isInstanceOfSatisfying(ChatException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILURE);
                        assertThat(e.getMessage()).isEqualTo("storing a batch of 250 events and 22 messages failed on "
                                + database.kind().productName());
                        assertThat(e.getCause()).isInstanceOf(JdbiException.class).hasRootCauseInstanceOf(SQLException.class);
                    });
            assertThat(store.findRun("r1")).isEmpty();
            assertThat(store.findMessage("r1-u")).isEmpty();
            assertThat(store.readEvents("r1", 0, 1000)).isEmpty();
            assertThat(store.findThread("t").orElseThrow().runtimeSessionId()).isEqualTo("sess-r0");
            assertThat(store.readEvents("r0", 0, 1000)).as("what was stored before stays").hasSize(250);
        }
    }

    @Test
    void readFailuresAreStoreFailuresWithTheirCause() {
        try (JdbiChatStore store = database.store().build()) {
            store.createThread(thread("t"));
            // renamed, not dropped: the other tables' foreign keys refer to it
            Jdbi.create(database.dataSource()).useHandle(h -> h.execute("ALTER TABLE parley_threads RENAME TO parley_gone"));
            assertThatThrownBy(() -> store.findThread("t"))
                    .isInstanceOfSatisfying(ChatException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILURE);
                        assertThat(e.getMessage()).isEqualTo("reading a thread failed on " + database.kind().productName());
                        assertThat(e.getCause()).hasRootCauseInstanceOf(SQLException.class);
                    });
            assertThatThrownBy(() -> store.createThread(thread("u")))
                    .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILURE));
        }
    }

    @Test
    void aStoredRowThatCannotBeReadIsAStoreFailure() {
        try (JdbiChatStore store = database.store().build()) {
            store.createThread(thread("t"));
            store.write(flush("t", "r"));
            store.write(StoreBatch.builder().event(new RunEvent("r", 251, T0.toEpochMilli(),
                    new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null))).build());
            Jdbi.create(database.dataSource()).useHandle(h -> {
                h.execute("UPDATE parley_messages SET body = '{\"type\":\"from_a_newer_version\"}' WHERE id = 'r-u'");
                assertThat(h.execute("UPDATE parley_run_events SET payload = 'not json' WHERE run_id = 'r' AND seq = "
                        + "(SELECT MIN(seq) FROM parley_run_events WHERE run_id = 'r' AND seq >= 2)"))
                        .as("the row holding seq 2").isEqualTo(1);
            });
            assertThatThrownBy(() -> store.findMessage("r-u"))
                    .isInstanceOfSatisfying(ChatException.class, e -> {
                        assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILURE);
                        assertThat(e.getMessage()).isEqualTo("a stored message cannot be read");
                    });
            assertThatThrownBy(() -> store.readEvents("r", 0, 10))
                    .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILURE));
            assertThatThrownBy(() -> store.readEvents("r", 200, 10))
                    .as("a cursor inside the span").isInstanceOf(ChatException.class);
            assertThat(store.readEvents("r", 250, 10)).as("the rest of the log reads").extracting(RunEvent::seq)
                    .containsExactly(251L);
        }
    }

    @Test
    void storesOnOneDatabaseGetOneWinnerPerClaimAndPerAnswer() throws Exception {
        try (JdbiChatStore first = database.store().build(); JdbiChatStore second = database.store().build()) {
            first.createThread(thread("t"));
            first.write(StoreBatch.builder().run(run("r", "t")).input(clarify("r")).build());
            List<ChatStore> stores = List.of(first, second);

            List<HostActionRecord> claims = Await.race(8, i -> stores.get(i % 2)
                    .claimHostAction("r", "x1", "lookup", "{}", T0.plusSeconds(i)));
            assertThat(claims).filteredOn(HostActionRecord::claimedNow).hasSize(1);
            List<AnswerOutcome> answers = Await.race(8, i -> stores.get(i % 2)
                    .answerInput("r", "c1", new ClarifyAnswer(List.of(i % 2 == 0 ? "a" : "b")), T0.plusSeconds(i)));
            assertThat(answers).filteredOn(o -> o == AnswerOutcome.ACCEPTED).hasSize(1);
            assertThat(answers).containsOnly(AnswerOutcome.ACCEPTED, AnswerOutcome.REPLAYED, AnswerOutcome.CONFLICT);
            assertThat(second.findInput("r", "c1").orElseThrow().state()).isEqualTo(InputState.ANSWERED);
        }
    }

    /**
     * A host pool with auto-commit off (a common JPA setting) hands out connections already "in a
     * transaction" and rolls back whatever is uncommitted when they come back: the store must commit its
     * writes itself. Read back through another store on another pool.
     */
    @Test
    void writesAreCommittedWhenTheHostsPoolTurnsAutoCommitOff() {
        try (JdbiChatStore migrating = database.store().build()) {
            assertThat(migrating.findThread("t")).isEmpty();
        }
        HikariDataSource noAutoCommit = database.pool(database.jdbcUrl(), 4, config -> {
            config.setAutoCommit(false);
            return config;
        });
        try (JdbiChatStore store = JdbiChatStore.builder(noAutoCommit).build()) {
            writeEveryKind(store);
        }
        noAutoCommit.close();
        try (JdbiChatStore reopened = database.store().build()) {
            assertEveryKindStored(reopened);
        }
    }

    /** Writes what {@link #assertEveryKindStored} checks: a thread, a batch, an answer, a claim, a reservation. */
    static void writeEveryKind(ChatStore store) {
        store.createThread(thread("t"));
        store.write(flush("t", "r1"));
        assertThat(store.answerInput("r1", "c1", new ClarifyAnswer(List.of("a")), T0)).isEqualTo(AnswerOutcome.ACCEPTED);
        assertThat(store.claimHostAction("r1", "x1", "lookup", "{}", T0).claimedNow()).isTrue();
        store.reserveSeq("r1", 4097);
        assertThat(store.findThread("t")).as("the writer reads its own writes").isPresent();
    }

    static void assertEveryKindStored(ChatStore store) {
        assertThat(store.findThread("t").orElseThrow().runtimeSessionId()).isEqualTo("sess-r1");
        assertThat(store.findRun("r1")).isPresent();
        assertThat(store.readEvents("r1", 0, 1000)).hasSize(250);
        assertThat(store.listStepMessagesAfter("r1", null, 1_000)).hasSize(20);
        PendingInput answered = store.findInput("r1", "c1").orElseThrow();
        assertThat(answered.state()).isEqualTo(InputState.ANSWERED);
        assertThat(answered.answer()).isEqualTo(new ClarifyAnswer(List.of("a")));
        assertThat(store.claimHostAction("r1", "x1", "lookup", "{}", T0).claimedNow())
                .as("the claim was kept: a second claim does not win").isFalse();
        assertThat(store.reservedSeq("r1")).isEqualTo(4097);
    }

    /** A fence over more runs than one IN list binds is checked in chunks, and still refuses the batch whole. */
    @Test
    void aFencedBatchOfManyRunsIsCheckedWhole() {
        try (JdbiChatStore store = database.store().build()) {
            store.createThread(thread("t"));
            StoreBatch.Builder setup = StoreBatch.builder();
            for (int i = 0; i < 1200; i++) {
                String runId = String.format("r%04d", i);
                setup.run(new Run(runId, "t", "alice", RunStatus.QUEUED, null, runId + "-a", "hi", null, null, null,
                        Map.of(), T0, null, null, null, null, null));
                setup.lease(new RunLease(runId, i == 1100 ? "host-b" : "host-a", T0.plusSeconds(30)));
            }
            store.write(setup.build());
            StoreBatch.Builder all = StoreBatch.builder().fence("host-a");
            StoreBatch.Builder mine = StoreBatch.builder().fence("host-a");
            for (int i = 1199; i >= 0; i--) {
                RunEvent event = new RunEvent(String.format("r%04d", i), 1, T0.toEpochMilli(),
                        new AgentStreamEvent.TextDelta("a", "x"));
                all.event(event);
                if (i != 1100) {
                    mine.event(event);
                }
            }
            assertThatThrownBy(() -> store.write(all.build()))
                    .isInstanceOfSatisfying(LeaseLostException.class, e -> assertThat(e.runIds()).containsExactly("r1100"));
            assertThat(store.readEvents("r0000", 0, 10)).isEmpty();
            store.write(mine.build());
            assertThat(store.readEvents("r0000", 0, 10)).hasSize(1);
            assertThat(store.readEvents("r1199", 0, 10)).hasSize(1);
            assertThat(store.readEvents("r1100", 0, 10)).isEmpty();
        }
    }

    @Test
    void theSeqReservationSurvivesTheStore() {
        try (JdbiChatStore store = database.store().build()) {
            store.createThread(thread("t"));
            store.write(StoreBatch.builder().run(run("r", "t")).build());
            store.reserveSeq("r", 4097);
        }
        try (JdbiChatStore reopened = database.store().build()) {
            assertThat(reopened.reservedSeq("r")).isEqualTo(4097);
            reopened.reserveSeq("r", 10);
            assertThat(reopened.reservedSeq("r")).isEqualTo(4097);
        }
    }
}
