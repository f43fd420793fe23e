package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.parley.chat.engine.AnswerResult;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.reduce.RunReducer;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.jdbi.internal.ProgressNotices;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.EventCollector;
import dev.parley.chat.testing.RunFollower;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Two host instances on one embedded PostgreSQL, each with its own pool, engine, runtime and
 * {@link PostgresRunCoordinator}: any instance serves any run, cancels and answers reach the instance
 * holding the run, and a killed instance's runs are INTERRUPTED after its lease.
 */
class PostgresClusterTest {
    private static final String ALICE = "alice";
    private static final Duration LEASE = Duration.ofMillis(1_500);

    private final List<AutoCloseable> closeables = new ArrayList<>();
    private String url;
    private Instance a;
    private Instance b;

    /** One host: a pool, a store, a coordinator and an engine. */
    private final class Instance {
        final HikariDataSource pool;
        final JdbiChatStore store;
        final PostgresRunCoordinator coordinator;
        final ExecutorService work = Executors.newCachedThreadPool();
        final ScriptedRuntime runtime;
        final ChatEngine engine;

        Instance(String id, ScriptedRuntime runtime) {
            HikariConfig config = new HikariConfig();
            config.setJdbcUrl(url);
            config.setMaximumPoolSize(8);
            config.setPoolName("pool-" + id);
            pool = new HikariDataSource(config);
            store = JdbiChatStore.builder(pool).build();
            coordinator = PostgresRunCoordinator.builder(pool).instanceId(id)
                    .pollInterval(Duration.ofMillis(100)).reconnectDelay(Duration.ofMillis(200)).build();
            this.runtime = runtime;
            engine = ChatEngine.builder().runtime(runtime).store(store).coordinator(coordinator)
                    .executor(work).leaseTimeout(LEASE).controlTimeout(Duration.ofSeconds(5)).build();
        }

        /** Closes everything in order, as a host shutting down does. */
        void close() {
            engine.close();
            coordinator.close();
            work.shutdownNow();
            store.close();
            pool.close();
        }

        /** Dies without cleanup: the pool and the work threads go, nothing is flushed or released. */
        void kill() {
            work.shutdownNow();
            pool.close();
        }
    }

    @BeforeEach
    void twoInstances() {
        url = EmbeddedPostgresServer.jdbcUrl(EmbeddedPostgresServer.newSchema());
    }

    @AfterEach
    void closeInstances() {
        for (Instance instance : new Instance[] {a, b}) {
            if (instance != null && !instance.pool.isClosed()) {
                instance.close();
            }
        }
    }

    private void start(ScriptedRuntime runtimeA, ScriptedRuntime runtimeB) {
        a = new Instance("a", runtimeA);
        b = new Instance("b", runtimeB);
    }


    private static Run awaitStatus(ChatEngine engine, String runId, RunStatus status) {
        return Await.until(() -> engine.state(ALICE, runId).run(), run -> run.status() == status, runId + " " + status);
    }

    private static List<Message> stored(ChatStore store, Run run) {
        List<Message> messages = new ArrayList<>();
        messages.add(store.findMessage(run.userMessageId()).orElseThrow());
        messages.add(store.findMessage(run.assistantMessageId()).orElseThrow());
        messages.addAll(store.listStepMessagesAfter(run.id(), null, 1_000));
        return messages;
    }

    @Test
    void clientsReconnectingAtRandomToEitherInstanceReassembleTheStoredMessages() throws Exception {
        start(ScriptedRuntime.playing(Scripts.slow(150, 2)), ScriptedRuntime.playing(Scripts.slow(150, 2)));
        List<RunTicket> tickets = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            ChatEngine owner = i % 2 == 0 ? a.engine : b.engine;
            String thread = owner.createThread(ALICE, NewThread.empty()).id();
            tickets.add(owner.startRun(ALICE, thread, StartRun.of("run " + i)));
        }
        ExecutorService clients = Executors.newFixedThreadPool(12);
        try {
            List<Future<List<RunEvent>>> results = new ArrayList<>();
            for (RunTicket ticket : tickets) {
                for (int c = 0; c < 2; c++) {
                    long seed = ticket.runId().hashCode() * 31L + c;
                    results.add(clients.submit(() -> RunFollower.follow(List.of(a.engine, b.engine), ALICE,
                            ticket.runId(), new Random(seed), 60)));
                }
            }
            for (int i = 0; i < results.size(); i++) {
                RunTicket ticket = tickets.get(i / 2);
                List<RunEvent> events = results.get(i).get(60, TimeUnit.SECONDS);
                Run run = awaitStatus(b.engine, ticket.runId(), RunStatus.SUCCEEDED);
                RunReducer reducer = new RunReducer();
                events.forEach(reducer::apply);
                assertThat(reducer.messages()).isEqualTo(stored(b.store, run));
            }
        } finally {
            clients.shutdownNow();
        }
    }


    @Test
    void aCancelAndAClarifyAnswerReachTheInstanceHoldingTheRun() {
        ScriptedRuntime runtimeA = ScriptedRuntime.of(request -> request.userMessage().equals("stop me")
                ? Scripts.streamsUntilCancelled() : Scripts.clarify("Which city?", List.of("Paris", "Rome")));
        start(runtimeA, ScriptedRuntime.playing(Scripts.instant("unused")));
        String t1 = a.engine.createThread(ALICE, NewThread.empty()).id();
        String t2 = a.engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket stopped = a.engine.startRun(ALICE, t1, StartRun.of("stop me"));
        RunTicket asking = a.engine.startRun(ALICE, t2, StartRun.of("ask me"));

        EventCollector.unbounded().subscribeTo(b.engine.subscribe(ALICE, stopped.runId(), 0)).awaitCount(4);
        b.engine.cancel(ALICE, stopped.runId());
        awaitStatus(b.engine, stopped.runId(), RunStatus.CANCELLED);
        assertThat(runtimeA.cancels()).containsExactly(stopped.runId());

        awaitStatus(b.engine, asking.runId(), RunStatus.WAITING_FOR_INPUT);
        assertThat(b.engine.answer(ALICE, asking.runId(), "ask-1", List.of("Rome"))).isEqualTo(AnswerResult.ACCEPTED);
        Run done = awaitStatus(b.engine, asking.runId(), RunStatus.SUCCEEDED);
        assertThat(runtimeA.answers()).hasSize(1);
        assertThat(((AssistantMessage) b.store.findMessage(done.assistantMessageId()).orElseThrow()).text())
                .isEqualTo("You chose Rome.");
    }

    @Test
    void aKilledInstancesRunsAreInterruptedAfterItsLeaseAndOtherInstancesSeeTheEnd() {
        start(ScriptedRuntime.playing(Scripts.streamsUntilCancelled()), ScriptedRuntime.playing(Scripts.instant("unused")));
        String thread = a.engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.engine.startRun(ALICE, thread, StartRun.of("go"));
        EventCollector onB = EventCollector.unbounded().subscribeTo(b.engine.subscribe(ALICE, ticket.runId(), 0))
                .awaitCount(4);

        long killedAt = System.nanoTime();
        a.kill();
        onB.awaitDone(30);
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
        RunEvent end = onB.events().get(onB.events().size() - 1);
        assertThat(end.event()).isInstanceOfSatisfying(AgentStreamEvent.RunFinished.class,
                finished -> assertThat(finished.status()).isEqualTo(RunStatus.INTERRUPTED));
        assertThat(tookMillis).as("taken over within about one and a half leases").isLessThan(LEASE.toMillis() * 4);
        assertThat(b.store.findRun(ticket.runId()).orElseThrow().status()).isEqualTo(RunStatus.INTERRUPTED);
        assertThat(b.store.findLease(ticket.runId()).orElseThrow().instanceId()).isEqualTo("b");
        assertThat(((AssistantMessage) b.store.findMessage(ticket.assistantMessageId()).orElseThrow()).text())
                .isEqualTo("Partial answer");
        RunTicket next = b.engine.startRun(ALICE, thread, StartRun.of("again"));
        awaitStatus(b.engine, next.runId(), RunStatus.SUCCEEDED);
    }

    @Test
    void aDroppedListenerConnectionIsReopenedAndSubscribersCatchUp() throws Exception {
        start(ScriptedRuntime.playing(Scripts.slow(80, 15)), ScriptedRuntime.playing(Scripts.instant("unused")));
        String thread = a.engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.engine.startRun(ALICE, thread, StartRun.of("go"));
        EventCollector onB = EventCollector.unbounded().subscribeTo(b.engine.subscribe(ALICE, ticket.runId(), 0))
                .awaitCount(5);

        try (Connection admin = a.pool.getConnection(); Statement statement = admin.createStatement()) {
            statement.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    + "WHERE query LIKE 'LISTEN%' AND pid <> pg_backend_pid()");
        }
        onB.awaitDone(30);
        Run run = awaitStatus(b.engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(onB.reduced().messages()).isEqualTo(stored(b.store, run));
        try (Connection admin = a.pool.getConnection(); Statement statement = admin.createStatement()) {
            Await.until(() -> countListeners(statement), count -> count >= 2, "both listeners to be back");
        }
    }

    private static int countListeners(Statement statement) {
        try (var rows = statement.executeQuery("SELECT count(*) FROM pg_stat_activity WHERE query LIKE 'LISTEN%'")) {
            rows.next();
            return rows.getInt(1);
        } catch (java.sql.SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void wakeUpsAreCoalescedAndSmall() throws Exception {
        start(ScriptedRuntime.playing(Scripts.manyDeltas(3_000)), ScriptedRuntime.playing(Scripts.instant("unused")));
        Map<String, List<Long>> notices = new HashMap<>();
        List<Integer> sizes = new ArrayList<>();
        try (Connection watcher = a.pool.getConnection()) {
            try (Statement statement = watcher.createStatement()) {
                statement.execute("LISTEN " + PostgresRunCoordinator.PROGRESS_CHANNEL);
            }
            String thread = a.engine.createThread(ALICE, NewThread.empty()).id();
            RunTicket ticket = a.engine.startRun(ALICE, thread, StartRun.of("go"));
            Run run = awaitStatus(a.engine, ticket.runId(), RunStatus.SUCCEEDED);
            long lastSeq = a.store.lastSeq(run.id());
            PGConnection pg = watcher.unwrap(PGConnection.class);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!notices.getOrDefault(run.id(), List.of()).contains(lastSeq) && System.nanoTime() < deadline) {
                PGNotification[] batch = pg.getNotifications(200);
                if (batch != null) {
                    for (PGNotification notice : batch) {
                        sizes.add(notice.getParameter().length());
                        ProgressNotices.parse(notice.getParameter(),
                                (runId, seq) -> notices.computeIfAbsent(runId, k -> new ArrayList<>()).add(seq));
                    }
                }
            }
            List<Long> forRun = notices.get(run.id());
            assertThat(forRun).as("the store's last seq was announced").contains(lastSeq);
            assertThat(forRun).as("one notice per flush, not per event").hasSizeLessThan((int) (lastSeq / 10));
            assertThat(forRun).isSorted().doesNotHaveDuplicates();
        }
        assertThat(sizes).allMatch(size -> size <= ProgressNotices.MAX_PAYLOAD_BYTES);

        Map<String, Long> many = new HashMap<>();
        for (int i = 0; i < 2_000; i++) {
            many.put(java.util.UUID.randomUUID().toString(), (long) i * 1_000_003);
        }
        List<String> payloads = ProgressNotices.payloads(many);
        assertThat(payloads).hasSizeGreaterThan(1).allMatch(p -> p.getBytes(java.nio.charset.StandardCharsets.UTF_8).length
                <= ProgressNotices.MAX_PAYLOAD_BYTES);
        Map<String, Long> parsed = new HashMap<>();
        payloads.forEach(p -> ProgressNotices.parse(p, parsed::put));
        assertThat(parsed).isEqualTo(many);
    }
}
