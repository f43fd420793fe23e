package dev.parley.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.reduce.RunReducer;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.sqlite.SQLiteDataSource;

/**
 * The database goes away for a few seconds while runs stream: PostgreSQL stopped and started again, a
 * SQLite file's disk full. Every run must either keep all its events (held while the store was away and
 * written after) or end FAILED with STORE_FAILURE; every stored log must be contiguous with one terminal
 * event and fold into the stored answer; a run started during the outage is refused and leaves nothing;
 * and the same engine, never restarted, takes new runs on every thread once the database is back.
 */
class DatabaseOutageChaosTest {
    private static final String OWNER = "chaos";
    private static final long DELTA_MILLIS = 20;

    /** How a database goes away and comes back. */
    private interface Outage {
        void begin() throws Exception;

        void end() throws Exception;
    }

    /** Each run's planned number of text deltas, by the run's user message. */
    private final Map<String, Integer> planned = new ConcurrentHashMap<>();
    /** When each run's runtime sent its end (System.nanoTime), by the run's user message. */
    private final Map<String, Long> endedAt = new ConcurrentHashMap<>();

    @Test
    void postgresStoppedAndStartedAgain() throws Exception {
        Path data = Files.createTempDirectory("chaos-pg-");
        EmbeddedPostgres[] server = {postgres(data, 0)};
        int port = server[0].getPort();
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl(server[0].getJdbcUrl("postgres", "postgres"));
        config.setMaximumPoolSize(10);
        config.setConnectionTimeout(1_000);
        config.setValidationTimeout(500);
        try (HikariDataSource pool = new HikariDataSource(config)) {
            play("database-outage-postgres", Chaos.seed(1705), JdbiChatStore.builder(pool).build(), new Outage() {
                @Override
                public void begin() throws Exception {
                    server[0].close();
                }

                @Override
                public void end() throws Exception {
                    server[0] = postgres(data, port);
                }
            });
        } finally {
            server[0].close();
        }
    }

    @Test
    void sqliteDiskFullForAWhile() throws Exception {
        Path file = Paths.get("target", "chaos-disk-full-" + UUID.randomUUID() + ".db").toAbsolutePath();
        SQLiteDataSource sqlite = new SQLiteDataSource();
        sqlite.setUrl("jdbc:sqlite:" + file);
        DiskFullDataSource disk = new DiskFullDataSource(sqlite);
        HikariConfig config = new HikariConfig();
        config.setDataSource(disk);
        config.setMaximumPoolSize(4);
        config.setConnectionTimeout(1_000);
        try (HikariDataSource pool = new HikariDataSource(config)) {
            play("database-outage-sqlite-disk-full", Chaos.seed(1706), JdbiChatStore.builder(pool).build(), new Outage() {
                @Override
                public void begin() {
                    disk.full(true);
                }

                @Override
                public void end() {
                    disk.full(false);
                }
            });
        }
    }

    private static EmbeddedPostgres postgres(Path data, int port) throws Exception {
        return EmbeddedPostgres.builder().setDataDirectory(data).setCleanDataDirectory(false).setPort(port)
                .setServerConfig("max_connections", "100").start();
    }

    private void play(String name, long seed, ChatStore store, Outage outage) throws Exception {
        Random random = new Random(seed);
        int runsPerOutage = 20;
        int outages = Chaos.size(1, 3);
        long outageMillis = Chaos.size(3_000, 5_000);
        List<Long> recoveries = new ArrayList<>();
        List<Long> catchUps = new ArrayList<>();
        int kept = 0;
        int failedClean = 0;
        int refusedClean = 0;
        int endedDuringOutage = 0;
        long eventsChecked = 0;
        long lost = 0;
        long duplicated = 0;
        try (store; PlayingRuntime runtime = new PlayingRuntime(this::paced);
                ChatEngine engine = ChatEngine.builder().runtime(runtime).store(store).build()) {
            for (int round = 0; round < outages; round++) {
                List<String> threads = new ArrayList<>();
                List<String> runIds = new ArrayList<>();
                for (int i = 0; i < runsPerOutage; i++) {
                    String thread = engine.createThread(OWNER, NewThread.empty()).id();
                    String message = "round " + round + " run " + i;
                    planned.put(message, (int) ((1_000 + random.nextInt(8_000)) / DELTA_MILLIS));
                    threads.add(thread);
                    runIds.add(engine.startRun(OWNER, thread, StartRun.of(message)).runId());
                }
                String refusedThread = engine.createThread(OWNER, NewThread.empty()).id();
                String recoveryThread = engine.createThread(OWNER, NewThread.empty()).id();
                Rest.sleep(1_000 + random.nextInt(1_500));

                outage.begin();
                long away = System.nanoTime();
                Rest.sleep(200);
                try {
                    engine.startRun(OWNER, refusedThread, StartRun.of("during the outage"));
                    throw new AssertionError("a run started while the database was away");
                } catch (ChatException e) {
                    assertThat(e.code()).isEqualTo(ErrorCode.STORE_FAILURE);
                }
                Rest.sleep(outageMillis - 200);
                outage.end();
                long back = System.nanoTime();

                recoveries.add(firstAcceptedRun(engine, recoveryThread, back));
                for (String runId : runIds) {
                    awaitStoredEnd(engine, store, runId);
                }
                catchUps.add((System.nanoTime() - back) / 1_000_000);

                assertThat(store.findThreadRuns(refusedThread, EnumSet.allOf(RunStatus.class)))
                        .as("what the refused run left").isEmpty();
                assertThat(store.listTopLevelMessages(refusedThread, null, 10)).isEmpty();
                refusedClean++;
                for (String runId : runIds) {
                    Run run = store.findRun(runId).orElseThrow();
                    long end = endedAt.getOrDefault(run.input(), 0L);
                    if (end > away && end < back) {
                        endedDuringOutage++;
                    }
                    List<RunEvent> events = store.readEvents(runId, 0, Integer.MAX_VALUE);
                    long[] gapsAndTwice = gapsAndDuplicates(events);
                    lost += gapsAndTwice[0];
                    duplicated += gapsAndTwice[1];
                    eventsChecked += events.size();
                    holdToItsLog(store, run, events);
                    if (run.status() == RunStatus.SUCCEEDED) {
                        long deltas = events.stream().filter(e -> e.event() instanceof AgentStreamEvent.TextDelta).count();
                        assertThat(deltas).as("the deltas of %s, all kept", runId).isEqualTo(planned.get(run.input()).longValue());
                        kept++;
                    } else {
                        assertThat(run.status()).as("%s: kept its events or failed cleanly", runId)
                                .isEqualTo(RunStatus.FAILED);
                        assertThat(run.error().code()).isEqualTo("STORE_FAILURE");
                        failedClean++;
                    }
                }
                for (String thread : threads) {
                    String next = engine.startRun(OWNER, thread, StartRun.of("short after the outage")).runId();
                    awaitStoredEnd(engine, store, next);
                    assertThat(store.findRun(next).orElseThrow().status()).isEqualTo(RunStatus.SUCCEEDED);
                }
            }
        }
        new Chaos.Figures(name, seed).put("runs", runsPerOutage * outages).put("outages", outages)
                .put("outageMillis", outageMillis).put("endedDuringOutage", endedDuringOutage).put("keptAllEvents", kept).put("failedStoreFailure", failedClean)
                .put("refusedDuringOutage", refusedClean).put("eventsChecked", eventsChecked).put("lost", lost)
                .put("duplicated", duplicated)
                .put("recoveryMillisMax", recoveries.stream().mapToLong(Long::longValue).max().orElse(0))
                .put("catchUpMillisMax", catchUps.stream().mapToLong(Long::longValue).max().orElse(0)).report();
        assertThat(lost).as("seqs missing from stored logs").isZero();
        assertThat(duplicated).as("seqs stored twice").isZero();
    }

    /** The stored run, answer and log agree: one terminal event, last, and the answer is what the log says. */
    private static void holdToItsLog(ChatStore store, Run run, List<RunEvent> events) {
        assertThat(events.stream().filter(e -> e.event().isTerminal())).as("terminal events of %s", run.id()).hasSize(1);
        assertThat(events.get(events.size() - 1).event().isTerminal()).isTrue();
        RunReducer reducer = new RunReducer();
        events.forEach(reducer::apply);
        assertThat(reducer.status()).as("the status of %s, by its log", run.id()).isEqualTo(run.status());
        AssistantMessage stored = (AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow();
        AssistantMessage logged = (AssistantMessage) reducer.messages().stream()
                .filter(m -> m.id().equals(run.assistantMessageId())).findFirst().orElseThrow();
        assertThat(stored).as("the stored answer of %s", run.id()).isEqualTo(logged);
    }

    private static long[] gapsAndDuplicates(List<RunEvent> events) {
        long previous = 0;
        long gaps = 0;
        long twice = 0;
        for (RunEvent event : events) {
            if (event.seq() <= previous) {
                twice++;
            } else {
                gaps += event.seq() - previous - 1;
                previous = event.seq();
            }
        }
        return new long[] {gaps, twice};
    }

    /** Milliseconds from the database's return to the first run the engine takes again. */
    private static long firstAcceptedRun(ChatEngine engine, String thread, long back) {
        long deadline = back + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            try {
                engine.startRun(OWNER, thread, StartRun.of("are you back?"));
                return (System.nanoTime() - back) / 1_000_000;
            } catch (ChatException notYet) {
                Rest.sleep(20);
            }
        }
        throw new AssertionError("the engine took no run within 60 s of the database's return");
    }

    /** Waits until the run's end is in the store. */
    private static void awaitStoredEnd(ChatEngine engine, ChatStore store, String runId) {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (System.nanoTime() < deadline) {
            try {
                if (store.findRun(runId).orElseThrow().status().isTerminal()
                        && engine.state(OWNER, runId).run().status().isTerminal()) {
                    return;
                }
            } catch (ChatException notYet) {
                // the store is still catching up
            }
            Rest.sleep(50);
        }
        throw new AssertionError("run " + runId + " has no stored end");
    }

    /** Text deltas, one every 20 ms, as many as the run's message planned; then success. */
    private void paced(dev.parley.chat.runtime.RunRequest request,
            dev.parley.chat.runtime.StreamPublisher.Emitter<AgentStreamEvent> out) throws InterruptedException {
        int count = planned.getOrDefault(request.userMessage(), 3);
        for (int i = 0; i < count; i++) {
            if (!out.emit(new AgentStreamEvent.TextDelta(request.assistantMessageId(), "d" + i + " "))) {
                return;
            }
            Thread.sleep(DELTA_MILLIS);
        }
        endedAt.put(request.userMessage(), System.nanoTime());
        out.emit(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
    }
}
