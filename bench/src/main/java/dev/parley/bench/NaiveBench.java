package dev.parley.bench;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.simulator.BridgeSimulator;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * Section 5, a naive peer on the same workloads: {@link NaivePeer} (an SSE event bus, an INSERT per
 * event in auto-commit, a thread per subscriber) against Parley on SQLite: (a) one run streaming as fast as
 * it can to one subscriber, (b) section 3's latency workload.
 */
final class NaiveBench {
    private final Env env;
    private final LatencyBench.Result parleyLatency;

    NaiveBench(Env env, LatencyBench.Result parleyLatency) {
        this.env = env;
        this.parleyLatency = parleyLatency;
    }

    void run() throws Exception {
        int n = env.options.naiveEvents;
        System.out.println("== 5. Naive peer (an INSERT per event, a thread per subscriber) vs Parley, both on SQLite");
        Stats naive = new Stats();
        Stats parley = new Stats();
        try (BridgeSimulator simulator = Env.simulator(0, 20L * n)) {
            HermesRuntimeAdapter adapter = Env.adapter(simulator, null);
            try (NaivePeer peer = new NaivePeer(simulator.baseUrl(), env.databases.newSqliteFile("naive"))) {
                int rounds = env.options.warmupRounds + env.options.rounds;
                for (int round = 0; round < rounds; round++) {
                    boolean warm = round < env.options.warmupRounds;
                    Env.settle();
                    long nanos = naiveThroughput(peer, n);
                    System.out.printf("   naive round %d%s: %.3f s, %,.0f events/s%n", round + 1, warm ? " (warm-up)" : "",
                            nanos / 1e9, n / (nanos / 1e9));
                    if (!warm) {
                        naive.add(n / (nanos / 1e9));
                    }
                    Env.settle();
                    nanos = parleyThroughput(adapter, n);
                    System.out.printf("   parley round %d%s: %.3f s, %,.0f events/s%n", round + 1, warm ? " (warm-up)" : "",
                            nanos / 1e9, n / (nanos / 1e9));
                    if (!warm) {
                        parley.add(n / (nanos / 1e9));
                    }
                }
            } finally {
                adapter.close();
            }
        }
        env.report.row("5a", "naive peer (INSERT per event, thread per subscriber), 1 run of " + n + " deltas → 1 subscriber, SQLite",
                naive.describe("ev/s"), "Parley on the same: " + Fmt.num(parley.median()) + " ev/s",
                "Parley ×" + Fmt.ratio(parley.median() / naive.median()), Report.Verdict.INFO);
        latency();
    }

    private long naiveThroughput(NaivePeer peer, int n) throws Exception {
        CountDownLatch done = new CountDownLatch(1);
        AtomicLong deltas = new AtomicLong();
        long[] end = new long[1];
        long start = System.nanoTime();
        String runId = peer.startRun("long " + n);
        peer.subscribe(runId, 0, event -> {
            if ("text_delta".equals(event.data().get("kind"))) {
                deltas.incrementAndGet();
            }
            if (event.type().equals("workflow_complete") || event.type().equals("workflow_error")) {
                end[0] = System.nanoTime();
                done.countDown();
            }
        });
        if (!done.await(600, TimeUnit.SECONDS) || deltas.get() != n) {
            throw new IllegalStateException("the naive run delivered " + deltas.get() + " of " + n);
        }
        return end[0] - start;
    }

    private long parleyThroughput(HermesRuntimeAdapter adapter, int n) throws Exception {
        ChatEngine engine = ChatEngine.builder().runtime(adapter).store(env.databases.newSqliteStore("naive-parley")).build();
        try {
            String thread = engine.createThread(Env.OWNER, NewThread.empty()).id();
            long start = System.nanoTime();
            RunTicket ticket = engine.startRun(Env.OWNER, thread, StartRun.of("long " + n));
            EngineSubscriber s = new EngineSubscriber(engine, ticket.runId(), null).start();
            long end = s.await(600);
            if (s.textDeltas() != n) {
                throw new IllegalStateException("parley delivered " + s.textDeltas() + " of " + n);
            }
            return end - start;
        } finally {
            engine.close();
        }
    }

    /** Section 3's workload through the naive peer, capped in time (it may not keep up). */
    private void latency() throws Exception {
        int runs = env.options.latencyRuns;
        int events = env.options.latencyEventsPerRun;
        double rate = env.options.latencyRate;
        long cap = env.options.naiveLatencyCapSeconds;
        Histogram histogram = new ConcurrentHistogram(3_600_000_000L, 3);
        AtomicLong delivered = new AtomicLong();
        long expected = (long) runs * events;
        long start;
        long wall;
        int threadsBefore = java.lang.management.ManagementFactory.getThreadMXBean().getThreadCount();
        int threadsDuring;
        try (BridgeSimulator simulator = Env.simulator(rate, 4L * runs * (events + 10));
                NaivePeer peer = new NaivePeer(simulator.baseUrl(), env.databases.newSqliteFile("naive-latency"))) {
            CountDownLatch done = new CountDownLatch(runs);
            long[] offsets = LatencyBench.startOffsets(runs);
            start = System.nanoTime();
            for (int i = 0; i < runs; i++) {
                long wait = start + offsets[i] - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
                String runId = peer.startRun("long " + events);
                peer.subscribe(runId, 0, event -> {
                    if ("text_delta".equals(event.data().get("kind")) && event.tsMicros() > 0) {
                        histogram.recordValue(Math.max(0, FrameTap.nowMicros() - event.tsMicros()));
                        delivered.incrementAndGet();
                    }
                    if (event.type().equals("workflow_complete") || event.type().equals("workflow_error")) {
                        done.countDown();
                    }
                });
            }
            long scheduledEnd = (long) (events / rate) + 2;
            Env.sleep(Math.min(scheduledEnd, cap) * 500);
            threadsDuring = java.lang.management.ManagementFactory.getThreadMXBean().getThreadCount();
            done.await(Math.max(1, cap - scheduledEnd / 2), TimeUnit.SECONDS);
            wall = System.nanoTime() - start;
        }
        boolean complete = delivered.get() == expected;
        String result = LatencyBench.Result.describe(histogram) + (complete ? ""
                : " (of the events delivered within " + cap + " s: " + delivered.get() + " of " + expected + ")");
        String parley = parleyLatency == null ? "n/a" : "p99 " + Fmt.ms(parleyLatency.p99s.median()) + " (median of rounds; pooled "
                + LatencyBench.Result.describe(parleyLatency.total) + ")";
        env.report.row("5b", "naive peer, latency on section 3's workload (" + runs + " runs × " + Fmt.num(rate) + " ev/s), SQLite",
                result, "Parley (3b): " + parley,
                parleyLatency == null ? "" : "naive p99 ×" + Fmt.ratio(histogram.getValueAtPercentile(99) / 1000.0
                        / parleyLatency.p99s.median()),
                Report.Verdict.INFO);
        env.report.note("5b: the naive peer needs one commit per event (" + Fmt.num(rate * runs) + " commits/s asked for); it "
                + (complete ? "delivered every event" : "delivered " + delivered.get() + " of " + expected + " events in "
                        + Fmt.num(wall / 1e9) + " s")
                + "; JVM threads while it ran: " + threadsDuring + " (before: " + threadsBefore + "), one per run and one per subscriber");
    }
}
