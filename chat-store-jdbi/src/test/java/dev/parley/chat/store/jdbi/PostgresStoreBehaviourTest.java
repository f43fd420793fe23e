package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.cluster.RunLease;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.store.LeaseLostException;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.jdbi.internal.RunDao;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.testing.Await;
import java.time.Instant;
import java.util.EnumSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import javax.sql.DataSource;
import org.jdbi.v3.core.Handle;
import org.jdbi.v3.core.Jdbi;
import org.junit.jupiter.api.Test;

/** On PostgreSQL (two stores with their own pools play two host instances). */
class PostgresStoreBehaviourTest extends StoreBehaviourTest {
    @Override
    TestDatabase createDatabase() {
        return TestDatabase.postgres();
    }

    /** With the driver's {@code reWriteBatchedInserts} on, a batch (with repeats) is stored as without it. */
    @Test
    void batchesSurviveTheDriverRewritingThemIntoMultiRowInserts() {
        Instant t0 = Instant.parse("2026-11-29T10:00:00Z");
        DataSource rewriting = database.pool(database.jdbcUrl(), 4, config -> {
            config.addDataSourceProperty("reWriteBatchedInserts", "true");
            return config;
        });
        try (JdbiChatStore store = JdbiChatStore.builder(rewriting).build()) {
            store.createThread(new ChatThread("t", "alice", null, null, null, null, ThreadStatus.ACTIVE, t0, t0));
            UserMessage first = new UserMessage("u1", "t", "r", null, MessageStatus.COMPLETED, t0, "first");
            UserMessage second = new UserMessage("u2", "t", "r", null, MessageStatus.COMPLETED, t0, "second");
            UserMessage firstAgain = new UserMessage("u1", "t", "r", null, MessageStatus.COMPLETED, t0, "first, edited");
            StoreBatch.Builder batch = StoreBatch.builder().run(run("r", "t")).message(first).message(second)
                    .message(firstAgain);
            for (int seq = 1; seq <= 300; seq++) {
                batch.event(new RunEvent("r", seq, seq, new AgentStreamEvent.TextDelta("m", "t" + seq)));
            }
            batch.event(new RunEvent("r", 7, 7, new AgentStreamEvent.TextDelta("m", "a repeat")));
            store.write(batch.build());

            assertThat(store.listTopLevelMessages("t", null, 10)).containsExactly(firstAgain, second);
            List<RunEvent> events = store.readEvents("r", 0, 1000);
            assertThat(events).extracting(RunEvent::seq).containsExactlyElementsOf(
                    LongStream.rangeClosed(1, 300).boxed().collect(Collectors.toList()));
            assertThat(events.get(6).event()).isEqualTo(new AgentStreamEvent.TextDelta("m", "t7"));
        }
    }

    /**
     * Two host instances (two stores, two pools) starting a run on one thread at the same moment: the busy
     * check the engine makes and the run's insert are separate transactions, so only the database can pick
     * one winner. The others get CONFLICT and store nothing.
     */
    @Test
    void instancesRacingToStartARunOnOneThreadGetOneWinner() throws Exception {
        try (JdbiChatStore first = database.store().build(); JdbiChatStore second = database.store().build()) {
            List<JdbiChatStore> stores = List.of(first, second);
            for (int round = 0; round < 5; round++) {
                String threadId = "t" + round;
                first.createThread(thread(threadId));
                String prefix = "r" + round + "-";
                List<String> outcomes = Await.race(16, i -> {
                    try {
                        stores.get(i % 2).write(StoreBatch.builder().run(run(prefix + i, threadId))
                                .message(new UserMessage(prefix + i + "-u", threadId, prefix + i, null,
                                        MessageStatus.COMPLETED, T0, "go"))
                                .build());
                        return "started " + prefix + i;
                    } catch (ChatException e) {
                        assertThat(e.getMessage()).isEqualTo("thread " + threadId + " already has an active run");
                        return e.code().name();
                    }
                });
                List<String> started = outcomes.stream().filter(o -> o.startsWith("started")).collect(Collectors.toList());
                assertThat(started).as("round %d: %s", round, outcomes).hasSize(1);
                assertThat(outcomes).filteredOn(o -> !o.startsWith("started")).hasSize(15).containsOnly("CONFLICT");
                String winner = started.get(0).substring("started ".length());
                assertThat(second.findThreadRuns(threadId, EnumSet.of(RunStatus.RUNNING, RunStatus.WAITING_FOR_INPUT)))
                        .extracting(Run::id).containsExactly(winner);
                for (int i = 0; i < 16; i++) {
                    if (!(prefix + i).equals(winner)) {
                        assertThat(first.findMessage(prefix + i + "-u")).as("a loser's batch is not stored").isEmpty();
                    }
                }
            }
        }
    }

    private static RunEvent delta(String runId, long seq) {
        return new RunEvent(runId, seq, T0.toEpochMilli() + seq, new AgentStreamEvent.TextDelta(runId + "-a", "t" + seq));
    }

    private static StoreBatch fencedEvents(String instanceId, String runId, long fromSeq, long toSeq) {
        StoreBatch.Builder batch = StoreBatch.builder().fence(instanceId);
        for (long seq = fromSeq; seq <= toSeq; seq++) {
            batch.event(delta(runId, seq));
        }
        return batch.build();
    }

    /** A run of host-a whose lease expired at T0 (so another instance may take it over). */
    private static void leasedRun(JdbiChatStore store) {
        store.createThread(thread("t"));
        store.write(StoreBatch.builder().run(run("r", "t")).lease(new RunLease("r", "host-a", T0)).build());
    }

    /**
     * Review defect 9, a fenced write first: host-a's batch has passed its fence check and is still open
     * when host-b takes the run over. The take-over waits for that batch to commit (the check locked the
     * run's row), and from then on host-a's fenced writes are refused: no event of the old holder is stored
     * after the take-over committed.
     */
    @Test
    void aTakeOverWaitsForAFencedWriteInFlightAndFencesTheOldHolderOut() throws Exception {
        StatementGate gate = new StatementGate("INSERT INTO parley_run_events");
        ExecutorService work = Executors.newFixedThreadPool(2);
        try (JdbiChatStore hostA = JdbiChatStore.builder(gate.wrap(database.pool(database.jdbcUrl(), 4, c -> c))).build();
                JdbiChatStore hostB = database.store().build()) {
            leasedRun(hostA);
            Future<?> inFlight = work.submit(() -> hostA.write(fencedEvents("host-a", "r", 1, 3)));
            gate.awaitReached();

            Future<Boolean> takeOver = work.submit(() -> hostB.takeOverRun("r", "host-b", T0.plusSeconds(60),
                    T0.plusSeconds(120)));
            assertThatThrownBy(() -> takeOver.get(700, TimeUnit.MILLISECONDS))
                    .as("the take-over waits for the fenced batch").isInstanceOf(TimeoutException.class);
            gate.open();
            inFlight.get(20, TimeUnit.SECONDS);
            assertThat(takeOver.get(20, TimeUnit.SECONDS)).isTrue();

            assertThatThrownBy(() -> hostA.write(fencedEvents("host-a", "r", 4, 5)))
                    .isInstanceOfSatisfying(LeaseLostException.class, e -> assertThat(e.runIds()).containsExactly("r"));
            assertThat(hostB.readEvents("r", 0, 100)).extracting(RunEvent::seq).containsExactly(1L, 2L, 3L);
            hostB.write(fencedEvents("host-b", "r", 4, 4));
            assertThat(hostB.readEvents("r", 3, 100)).containsExactly(delta("r", 4));
        } finally {
            gate.open();
            work.shutdownNow();
        }
    }

    /**
     * Review defect 9, the take-over first: while host-b's take-over is uncommitted, host-a's fenced batch
     * waits for it, then sees the new holder and is refused whole.
     */
    @Test
    void aFencedWriteWaitsForATakeOverInFlightAndIsRefused() throws Exception {
        ExecutorService work = Executors.newSingleThreadExecutor();
        try (JdbiChatStore hostA = database.store().build(); Handle hostB = Jdbi.create(database.dataSource()).open()) {
            leasedRun(hostA);
            hostB.begin();
            assertThat(hostB.createUpdate(RunDao.TAKE_OVER_RUN).bind("runId", "r").bind("instanceId", "host-b")
                    .bind("now", T0.plusSeconds(60).toEpochMilli()).bind("until", T0.plusSeconds(120).toEpochMilli())
                    .execute()).isEqualTo(1);

            Future<?> fenced = work.submit(() -> hostA.write(StoreBatch.builder().add(fencedEvents("host-a", "r", 1, 3))
                    .reserveSeq("r", 4096).fence("host-a").build()));
            assertThatThrownBy(() -> fenced.get(700, TimeUnit.MILLISECONDS))
                    .as("the fenced batch waits for the take-over").isInstanceOf(TimeoutException.class);
            hostB.commit();
            assertThatThrownBy(() -> fenced.get(20, TimeUnit.SECONDS))
                    .hasCauseInstanceOf(LeaseLostException.class);
            assertThat(hostA.readEvents("r", 0, 100)).isEmpty();
            assertThat(hostA.reservedSeq("r")).isZero();
        } finally {
            work.shutdownNow();
        }
    }

    /** PostgreSQL text cannot hold U+0000: JSON columns escape it, plain columns store U+FFFD instead of failing. */
    @Test
    void aNulCharacterNeverFailsAWrite() {
        Instant t0 = Instant.parse("2026-11-29T10:00:00Z");
        try (JdbiChatStore store = database.store().build()) {
            store.createThread(new ChatThread("t", "alice", null, null, null, null, ThreadStatus.ACTIVE, t0, t0));
            UserMessage withNul = new UserMessage("u", "t", "r", null, MessageStatus.COMPLETED, t0, "a\u0000b");
            store.write(StoreBatch.builder().message(withNul).build());
            assertThat(store.findMessage("u")).contains(withNul);

            store.createThread(new ChatThread("t2", "alice", "a\u0000b", null, null, null, ThreadStatus.ACTIVE, t0, t0));
            assertThat(store.findThread("t2").orElseThrow().title()).isEqualTo("a\uFFFDb");
        }
    }
}
