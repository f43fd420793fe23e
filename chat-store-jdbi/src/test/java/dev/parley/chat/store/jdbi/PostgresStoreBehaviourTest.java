package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.ChatException;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.testing.Await;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.LongStream;
import javax.sql.DataSource;
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
            StoreBatch.Builder batch = StoreBatch.builder().message(first).message(second).message(firstAgain);
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
