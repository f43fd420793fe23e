package dev.parley.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.reduce.RunReducer;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import dev.parley.chaos.FaultBridge.Fault;
import dev.parley.chaos.FaultBridge.Plan;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * The real Hermes adapter against a Bridge that breaks each run at a random point in a random way
 * ({@link FaultBridge}), on the real engine and a SQLite file: every run must end in the terminal state its
 * fault calls for, its stored log contiguous with one terminal event, its stored answer exactly the text
 * that arrived before the fault, and its thread must take the next run. Runs go in rounds of one run per
 * lane (thread); every tenth round the Bridge is down (connection refused).
 */
class RuntimeFaultsChaosTest {
    private static final String OWNER = "chaos";
    private static final Fault[] RANDOM_FAULTS = {Fault.NONE, Fault.RESET, Fault.RESET_LOST, Fault.STALL,
        Fault.MALFORMED, Fault.UNKNOWN_KIND, Fault.HTTP_500, Fault.HTTP_503, Fault.TRUNCATED, Fault.TRUNCATED_ALWAYS,
        Fault.SESSION_BUSY, Fault.FRAGMENTED, Fault.SLOW_READER};

    /** What a fault must lead to: the run's status, its error code, and whether its answer is whole. */
    private record Expected(RunStatus status, String code, boolean whole) {
        static Expected of(Fault fault) {
            return switch (fault) {
                case NONE, RESET, STALL, UNKNOWN_KIND, TRUNCATED, FRAGMENTED, SLOW_READER ->
                    new Expected(RunStatus.SUCCEEDED, "", true);
                case RESET_LOST, TRUNCATED_ALWAYS -> new Expected(RunStatus.FAILED, "STREAM_LOST", false);
                case MALFORMED -> new Expected(RunStatus.FAILED, "PROTOCOL_ERROR", false);
                case HTTP_500 -> new Expected(RunStatus.FAILED, "INTERNAL", false);
                case HTTP_503, REFUSED -> new Expected(RunStatus.FAILED, "RUNTIME_UNAVAILABLE", false);
                case SESSION_BUSY -> new Expected(RunStatus.FAILED, "SESSION_BUSY", false);
            };
        }
    }

    private final Map<Fault, Integer> injected = new EnumMap<>(Fault.class);
    private long eventsChecked;
    private long lost;
    private long duplicated;
    private int partialKept;
    private int slowReaderCutOffs;

    @Test
    void everyRunEndsCleanWithItsPartialOutputKeptAndItsThreadUsable() throws Exception {
        long seed = Chaos.seed(1703);
        Random random = new Random(seed);
        int lanes = 8;
        int rounds = Chaos.size(25, 125);
        Path file = Paths.get("target", "chaos-runtime-faults-" + UUID.randomUUID() + ".db");
        long began = System.nanoTime();
        try (FaultBridge bridge = new FaultBridge(seed);
                HermesRuntimeAdapter adapter = new HermesRuntimeAdapter(HermesConfig.builder().baseUrl(bridge.baseUrl())
                        .connectTimeout(Duration.ofSeconds(2)).idleTimeout(Duration.ofSeconds(1))
                        .reattachAttempts(3).reattachBackoff(Duration.ofMillis(50)).build());
                JdbiChatStore store = JdbiChatStore.sqlite(file).build();
                ChatEngine engine = ChatEngine.builder().runtime(adapter).store(store)
                        .limits(EngineLimits.defaults().withSubscriberLagLimit(8)).build()) {
            ExecutorService pool = Executors.newFixedThreadPool(lanes);
            List<String> threads = new ArrayList<>();
            for (int lane = 0; lane < lanes; lane++) {
                threads.add(engine.createThread(OWNER, NewThread.empty()).id());
            }
            for (int round = 0; round < rounds; round++) {
                boolean outage = round % 10 == 9;
                if (outage) {
                    bridge.down();
                }
                List<Future<?>> results = new ArrayList<>();
                for (String thread : threads) {
                    Plan plan = plan(random, outage);
                    injected.merge(plan.fault(), 1, Integer::sum);
                    results.add(pool.submit(() -> {
                        playAndCheck(engine, store, thread, plan);
                        return null;
                    }));
                }
                for (Future<?> result : results) {
                    result.get();
                }
                if (outage) {
                    bridge.up();
                }
            }
            for (String thread : threads) {
                playAndCheck(engine, store, thread, new Plan(Fault.NONE, 0, 5));
            }
            pool.shutdown();
        }
        int runs = injected.values().stream().mapToInt(Integer::intValue).sum();
        new Chaos.Figures("runtime-faults", seed).put("runs", runs + lanes).put("lanes", lanes)
                .put("faultsInjected", runs - injected.getOrDefault(Fault.NONE, 0))
                .put("byFault", injected.toString().replace(" ", ""))
                .put("eventsChecked", eventsChecked).put("lost", lost).put("duplicated", duplicated)
                .put("failedWithPartialKept", partialKept).put("slowReaderCutOffs", slowReaderCutOffs)
                .put("wallMillis", (System.nanoTime() - began) / 1_000_000).report();
        assertThat(lost).as("seqs missing from stored logs").isZero();
        assertThat(duplicated).as("seqs stored twice").isZero();
        assertThat(runs).isGreaterThanOrEqualTo(Chaos.size(200, 1000));
    }

    private static Plan plan(Random random, boolean outage) {
        int deltas = 3 + random.nextInt(30);
        Fault fault = outage ? Fault.REFUSED : RANDOM_FAULTS[random.nextInt(RANDOM_FAULTS.length)];
        int frames = deltas + 6;
        return new Plan(fault, 1 + random.nextInt(frames - 1), deltas);
    }

    /** Plays one run on the thread (which must take it) and holds its end, log and answer to its plan. */
    private void playAndCheck(ChatEngine engine, JdbiChatStore store, String thread, Plan plan) throws Exception {
        RunTicket ticket = engine.startRun(OWNER, thread, StartRun.of(plan.message()));
        SlowReader slow = plan.fault() == Fault.SLOW_READER ? new SlowReader(engine, OWNER, ticket.runId(), 15) : null;
        Run run = awaitEnd(engine, ticket.runId());
        Expected expected = Expected.of(plan.fault());
        String what = plan.message() + " (run " + ticket.runId() + ")";

        assertThat(run.status()).as("status after %s: %s", what, run.error()).isEqualTo(expected.status());
        if (!expected.code().isEmpty()) {
            assertThat(run.error()).as("error after %s", what).isNotNull();
            assertThat(run.error().code()).as("error code after %s: %s", what, run.error()).isEqualTo(expected.code());
        }
        List<RunEvent> events = store.readEvents(ticket.runId(), 0, Integer.MAX_VALUE);
        RunReducer reducer = new RunReducer();
        long previous = 0;
        long gaps = 0;
        long twice = 0;
        for (RunEvent event : events) {
            if (event.seq() <= previous) {
                twice++;
                continue;
            }
            gaps += event.seq() - previous - 1;
            previous = event.seq();
            reducer.apply(event);
        }
        assertThat(events.stream().filter(e -> e.event().isTerminal())).as("terminal events of %s", what).hasSize(1);
        assertThat(events.get(events.size() - 1).event().isTerminal()).isTrue();
        String stored = ((AssistantMessage) store.findMessage(ticket.assistantMessageId()).orElseThrow()).text();
        String logged = ((AssistantMessage) reducer.messages().stream()
                .filter(m -> m.id().equals(ticket.assistantMessageId())).findFirst().orElseThrow()).text();
        assertThat(stored).as("the stored answer of %s is what its events say", what).isEqualTo(logged);
        if (expected.whole()) {
            assertThat(stored).as("the answer of %s", what).isEqualTo(plan.text());
        } else if (plan.fault() == Fault.RESET_LOST) {
            assertThat(plan.textBefore(plan.point())).as("the answer kept of %s", what).startsWith(stored);
        } else if (plan.fault() == Fault.MALFORMED || plan.fault() == Fault.TRUNCATED_ALWAYS) {
            assertThat(stored).as("the answer kept of %s", what).isEqualTo(plan.textBefore(plan.point()));
        } else {
            assertThat(stored).as("the answer of %s, refused before any frame", what).isEmpty();
        }
        int textDeltas = (int) events.stream().filter(e -> e.event() instanceof AgentStreamEvent.TextDelta).count();
        synchronized (this) {
            eventsChecked += events.size();
            lost += gaps;
            duplicated += twice;
            if (!expected.whole() && textDeltas > 0) {
                partialKept++;
            }
        }
        if (slow != null) {
            List<RunEvent> read = slow.awaitAll(30);
            assertThat(read).as("what the slow reader of %s got, after %d cut-offs", what, slow.cutOffs())
                    .isEqualTo(events);
            synchronized (this) {
                slowReaderCutOffs += slow.cutOffs();
            }
        }
    }

    private static Run awaitEnd(ChatEngine engine, String runId) {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            Run run = engine.state(OWNER, runId).run();
            if (run.status().isTerminal()) {
                return run;
            }
            Rest.sleep(10);
        }
        throw new AssertionError("run " + runId + " did not end");
    }
}
