package dev.parley.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.AnswerResult;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.ThreadKinds;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Runs waiting on a clarify answer, through ChatEngine and the Hermes adapter against the simulator over
 * loopback. On Java 21+ (the {@code java-25} execution) they hold no platform thread: the JVM's platform
 * thread count ({@code ThreadMXBean#getThreadCount} counts no virtual threads) stays within a small bound. On
 * Java 17 each waiting run holds three (the adapter's stream reader, the simulator's stream handler and its
 * agent), which shows that the count sees them. Either way every run then finishes when answered.
 */
class WaitingRunsTest {
    private static final String OWNER = "alice";
    private static final int RUNS = 200;
    /** Platform threads the runs may add on Java 21+: carriers (one per core at most), HTTP client and JDK helpers. */
    private static final int BOUND = Runtime.getRuntime().availableProcessors() + 16;

    @Test
    void waitingRunsHoldNoPlatformThreadOnJava21AndFinishWhenAnswered() throws Exception {
        boolean virtual = ThreadKinds.expectVirtual();
        try (BridgeSimulator simulator = BridgeSimulator.start(SimulatorConfig.builder()
                        .heartbeatInterval(Duration.ofSeconds(5)).build());
                HermesRuntimeAdapter adapter = new HermesRuntimeAdapter(HermesConfig.builder().baseUrl(simulator.baseUrl())
                        .idleTimeout(Duration.ofSeconds(30)).build());
                ChatEngine engine = ChatEngine.builder().runtime(adapter).store(new InMemoryChatStore()).deliveryThreads(2)
                        .build()) {
            answerAll(engine, startWaiting(engine, 4));
            Map<String, Integer> before = threadKinds();
            int threadsBefore = ManagementFactory.getThreadMXBean().getThreadCount();

            long start = System.nanoTime();
            List<String> runs = startWaiting(engine, RUNS);
            double waitingAfter = (System.nanoTime() - start) / 1e9;
            int threadsWaiting = ManagementFactory.getThreadMXBean().getThreadCount();
            int grown = threadsWaiting - threadsBefore;
            String kinds = grownKinds(before, threadKinds());
            System.out.printf("%d runs waiting after %.1f s on Java %d added %d platform threads (%d → %d): %s%n", RUNS,
                    waitingAfter, Runtime.version().feature(), grown, threadsBefore, threadsWaiting, kinds);
            if (virtual) {
                assertThat(grown).as("platform threads added by %d waiting runs (%s)", RUNS, kinds).isLessThanOrEqualTo(BOUND);
            } else {
                assertThat(grown).as("platform threads added by %d waiting runs without virtual threads (%s)", RUNS, kinds)
                        .isGreaterThanOrEqualTo(2 * RUNS);
            }
            start = System.nanoTime();
            answerAll(engine, runs);
            System.out.printf("and all succeeded %.1f s after the first answer%n", (System.nanoTime() - start) / 1e9);
        }
    }

    /**
     * Starts the runs one after another, each once the previous one waits, as waiting runs pile up in a host
     * over time (a burst of simultaneous starts also adds OkHttp's connect threads, which idle out in a minute).
     */
    private static List<String> startWaiting(ChatEngine engine, int count) {
        List<String> runs = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String thread = engine.createThread(OWNER, NewThread.empty()).id();
            String run = engine.startRun(OWNER, thread, StartRun.of("clarify please")).runId();
            Await.until(() -> engine.state(OWNER, run).run().status(), s -> s == RunStatus.WAITING_FOR_INPUT,
                    "run " + run + " to wait for its clarify answer");
            runs.add(run);
        }
        return runs;
    }

    /** Answers from a few threads (each answer is an HTTP call to the simulator), then waits for every run to succeed. */
    private static void answerAll(ChatEngine engine, List<String> runs) throws Exception {
        int answerers = Math.min(8, runs.size());
        Await.race(answerers, n -> {
            for (int i = n; i < runs.size(); i += answerers) {
                String clarifyId = engine.state(OWNER, runs.get(i)).pendingInputs().get(0).inputId();
                assertThat(engine.answer(OWNER, runs.get(i), clarifyId, List.of("A table"))).isEqualTo(AnswerResult.ACCEPTED);
            }
            return null;
        });
        for (String run : runs) {
            Await.until(() -> engine.state(OWNER, run).run().status(), s -> s == RunStatus.SUCCEEDED,
                    "run " + run + " to succeed once answered");
        }
    }

    /** Live platform threads by name, digits replaced by {@code #}. */
    private static Map<String, Integer> threadKinds() {
        Map<String, Integer> kinds = new TreeMap<>();
        for (ThreadInfo info : ManagementFactory.getThreadMXBean().dumpAllThreads(false, false, 0)) {
            kinds.merge(info.getThreadName().replaceAll("[0-9]+", "#"), 1, Integer::sum);
        }
        return kinds;
    }

    private static String grownKinds(Map<String, Integer> before, Map<String, Integer> after) {
        StringBuilder grown = new StringBuilder();
        after.forEach((kind, count) -> {
            int added = count - before.getOrDefault(kind, 0);
            if (added > 0) {
                grown.append(grown.length() == 0 ? "" : ", ").append(kind).append(" +").append(added);
            }
        });
        return grown.length() == 0 ? "none" : grown.toString();
    }
}
