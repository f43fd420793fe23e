package dev.parley.bench;

import dev.parley.chat.engine.AnswerResult;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.RunThreads;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.simulator.BridgeSimulator;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Section 4e, waiting runs: what runs that wait days for an answer cost in JVM threads. R runs (1 000) wait on
 * a clarify question (the simulator's CLARIFY scenario) through ChatEngine (in-memory store) and the Hermes
 * adapter; they are started one after another, each once the previous one waits, as waiting runs pile up in a
 * host over time (a burst of simultaneous starts also leaves OkHttp's connect threads idle for a minute). The
 * JVM's thread count ({@code ThreadMXBean}, which counts platform threads only) after a warm-up with none
 * waiting and with R waiting; on Java 21+ the run threads are virtual ({@link RunThreads}) and the target is
 * at most 1.1 times the threads with none; on Java 17 each waiting run holds platform threads, shown unjudged.
 */
final class WaitingRunsBench {
    private static final int WARMUP_RUNS = 20;
    private static final double TARGET = 1.1;

    private final Env env;

    WaitingRunsBench(Env env) {
        this.env = env;
    }

    void run() {
        int runs = env.options.waitingRuns;
        int java = Runtime.version().feature();
        String kind = RunThreads.virtual() ? "virtual" : "platform";
        System.out.println("== 4e. Waiting runs: JVM threads with 0 and " + runs + " runs waiting on a clarify (Java " + java
                + ", " + kind + " run threads)");
        try (BridgeSimulator simulator = Env.simulator(0, 1_000_000);
                HermesRuntimeAdapter adapter = Env.adapter(simulator, null);
                ChatEngine engine = ChatEngine.builder().runtime(adapter).store(new InMemoryChatStore()).build()) {
            answer(engine, startWaiting(engine, WARMUP_RUNS));
            int none = settledThreadCount();
            Map<String, Integer> kindsBefore = threadKinds();
            long start = System.nanoTime();
            startWaiting(engine, runs);
            double seconds = (System.nanoTime() - start) / 1e9;
            int waiting = settledThreadCount();
            Map<String, Integer> kindsWaiting = threadKinds();
            System.out.printf("   %d runs waiting after %.1f s: %d threads (%d with none)%n", runs, seconds, waiting, none);
            double ratio = (double) waiting / none;
            Report.Verdict verdict = java < 21 ? Report.Verdict.JAVA17
                    : ratio <= TARGET ? Report.Verdict.MET : Report.Verdict.MISSED;
            env.report.row("4e", "JVM threads with 0 / " + runs + " runs waiting on a clarify (Hermes adapter + ChatEngine, "
                    + "in-memory store; Java " + java + ", " + kind + " run threads)", none + " / " + waiting,
                    "≤ 1.1 × the threads with none (Java 21+)", Fmt.ratio(ratio), verdict);
            env.report.note("4e: thread kinds that changed from 0 to " + runs + " waiting runs: "
                    + OpenStreamsBench.threadDiff(kindsBefore, kindsWaiting) + " (platform threads only; started in "
                    + Fmt.num(seconds) + " s)");
        }
    }

    private List<String> startWaiting(ChatEngine engine, int count) {
        List<String> runIds = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String thread = engine.createThread(Env.OWNER, NewThread.empty()).id();
            String runId = engine.startRun(Env.OWNER, thread, StartRun.of("clarify please")).runId();
            waitFor(() -> engine.state(Env.OWNER, runId).run().status() == RunStatus.WAITING_FOR_INPUT,
                    "run " + runId + " to wait for its answer");
            runIds.add(runId);
        }
        return runIds;
    }

    private void answer(ChatEngine engine, List<String> runIds) {
        for (String runId : runIds) {
            String asked = engine.state(Env.OWNER, runId).pendingInputs().get(0).inputId();
            if (engine.answer(Env.OWNER, runId, asked, List.of("A table")) != AnswerResult.ACCEPTED) {
                throw new IllegalStateException("the warm-up run " + runId + " did not take its answer");
            }
        }
        for (String runId : runIds) {
            waitFor(() -> engine.state(Env.OWNER, runId).run().status() == RunStatus.SUCCEEDED,
                    "the warm-up run " + runId + " to succeed");
        }
    }

    private static void waitFor(Supplier<Boolean> condition, String what) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!condition.get()) {
            if (System.nanoTime() > end) {
                throw new IllegalStateException("timed out waiting for " + what);
            }
            Env.sleep(2);
        }
    }

    /** The thread count after a pause and GCs, so that threads ending on their own have ended. */
    private static int settledThreadCount() {
        Env.sleep(1000);
        Env.settle();
        return ManagementFactory.getThreadMXBean().getThreadCount();
    }

    private static Map<String, Integer> threadKinds() {
        Map<String, Integer> kinds = new TreeMap<>();
        for (ThreadInfo info : ManagementFactory.getThreadMXBean().dumpAllThreads(false, false, 0)) {
            kinds.merge(info.getThreadName().replaceAll("[0-9]+", "#"), 1, Integer::sum);
        }
        return kinds;
    }
}
