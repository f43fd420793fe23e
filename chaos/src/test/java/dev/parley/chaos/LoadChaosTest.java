package dev.parley.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.StreamPublisher;
import dev.parley.chat.spring.internal.SseStreams;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Many runs at once through the starter's HTTP endpoint: each run streams 50 text deltas a second for the
 * round's length, read by two SSE subscribers; two rounds. Every subscriber must get every event exactly
 * once (a subscriber cut off as slow comes back with its cursor), the heap and the threads (outside the
 * pools that follow the peak of concurrent requests) after the second round must be where they were after
 * the first (nothing kept per run), and the added latency — from the runtime's emit to the subscriber's
 * read, both stamped with this JVM's clock — is reported.
 */
class LoadChaosTest {
    private static final int EVENTS_PER_SECOND = 50;
    private static final int SUBSCRIBERS_PER_RUN = 2;

    /** Thread names (digits as {@code #}) of the pools that grow with concurrent requests; see {@link #fixedThreads}. */
    private static final Pattern ELASTIC_POOLS = Pattern.compile(
            "http-nio-.*-exec-#|HttpClient-#-Worker-#|pool-#-thread-#|playing-runtime");

    /** What one subscriber got: its seqs in order, its latencies in microseconds, its reconnects. */
    private record Read(long[] seqs, long[] latencies, int reconnects) {
    }

    @Test
    void manyRunsWithTwoSubscribersEachLoseNothingAndLeaveNothingBehind() throws Exception {
        long seed = Chaos.seed(1707);
        Random random = new Random(seed);
        int runs = Chaos.size(100, 500);
        int seconds = Chaos.size(8, 60);
        int events = EVENTS_PER_SECOND * seconds;
        Path file = Paths.get("target", "chaos-load-" + UUID.randomUUID() + ".db");
        ScheduledExecutorService ticks = Executors.newScheduledThreadPool(4);
        List<long[]> latencies = new ArrayList<>();
        long[] heapAfter = new long[2];
        int[] threadsAfter = new int[2];
        List<Map<String, Integer>> threadKinds = new ArrayList<>();
        long lost = 0;
        long duplicated = 0;
        long delivered = 0;
        int reconnects = 0;
        long began = System.nanoTime();
        try (PlayingRuntime runtime = new PlayingRuntime((request, out) -> paced(ticks, random, events, request
                .assistantMessageId(), out));
                InProcessHost host = InProcessHost.start(runtime, file)) {
            Rest rest = new Rest(host.baseUrl());
            ExecutorService readers = Executors.newCachedThreadPool();
            for (int round = 0; round < 2; round++) {
                List<Future<Read>> reads = new ArrayList<>();
                List<String> runIds = new ArrayList<>();
                for (int r = 0; r < runs; r++) {
                    String runId = rest.startRun(rest.newSession(), "load " + round + "." + r);
                    runIds.add(runId);
                    for (int s = 0; s < SUBSCRIBERS_PER_RUN; s++) {
                        reads.add(readers.submit(() -> subscribe(host.baseUrl(), runId)));
                    }
                }
                long expected = events + 3;
                for (Future<Read> future : reads) {
                    Read read = future.get(seconds + 120L, TimeUnit.SECONDS);
                    long[] distinct = Arrays.stream(read.seqs()).distinct().toArray();
                    duplicated += read.seqs().length - distinct.length;
                    lost += expected - distinct.length;
                    delivered += read.seqs().length;
                    reconnects += read.reconnects();
                    latencies.add(read.latencies());
                }
                for (String runId : runIds) {
                    rest.awaitState(runId, Rest::terminal, Duration.ofSeconds(30), "its end");
                    assertThat(rest.status(runId)).isEqualTo(RunStatus.SUCCEEDED.name());
                }
                awaitNoOpenStreams(host.bean(SseStreams.class));
                heapAfter[round] = settledHeap();
                threadsAfter[round] = Thread.activeCount();
                threadKinds.add(threadKinds());
            }
            readers.shutdown();
        } finally {
            ticks.shutdownNow();
        }
        long[] all = latencies.stream().flatMapToLong(Arrays::stream).sorted().toArray();
        long growth = heapAfter[1] - heapAfter[0];
        new Chaos.Figures("load", seed).put("runsPerRound", runs).put("rounds", 2).put("secondsPerRun", seconds)
                .put("eventsPerSecondPerRun", EVENTS_PER_SECOND).put("subscribersPerRun", SUBSCRIBERS_PER_RUN)
                .put("eventsDelivered", delivered).put("lost", lost).put("duplicated", duplicated)
                .put("slowReconnects", reconnects)
                .put("addedLatencyP50Micros", Chaos.quantile(all, 0.50))
                .put("addedLatencyP99Micros", Chaos.quantile(all, 0.99))
                .put("addedLatencyMaxMicros", Chaos.quantile(all, 1.0))
                .put("heapAfterRound1MB", heapAfter[0] >> 20).put("heapAfterRound2MB", heapAfter[1] >> 20)
                .put("heapGrowthKBPerRun", growth / 1024 / runs)
                .put("threadsAfterRounds", threadsAfter[0] + "/" + threadsAfter[1])
                .put("threadsOutsidePoolsAfterRounds", fixedThreads(threadKinds.get(0)) + "/" + fixedThreads(threadKinds.get(1)))
                .put("wallMillis", (System.nanoTime() - began) / 1_000_000).report();
        assertThat(lost).as("events a subscriber never got").isZero();
        assertThat(duplicated).as("events a subscriber got twice").isZero();
        assertThat(growth).as("heap growth from round 1 to round 2 (%d runs each)", runs)
                .isLessThan(Math.max(32L << 20, heapAfter[0] / 10));
        assertThat(fixedThreads(threadKinds.get(1))).as("threads outside the elastic pools after round 2, by kind:"
                + " %s after round 1, %s after round 2", threadKinds.get(0), threadKinds.get(1))
                .isLessThanOrEqualTo(fixedThreads(threadKinds.get(0)) + 16);
    }

    /**
     * A run's deltas at 50 a second, on a shared scheduler, each carrying its emit time in microseconds
     * ({@code "<i>@<micros> "}); then success. The first tick comes at a random point of the first period.
     */
    private static void paced(ScheduledExecutorService ticks, Random random, int events, String messageId,
            StreamPublisher.Emitter<AgentStreamEvent> out) throws InterruptedException {
        long period = 1_000_000 / EVENTS_PER_SECOND;
        long offset;
        synchronized (random) {
            offset = random.nextInt((int) period);
        }
        int[] sent = {0};
        AtomicReference<ScheduledFuture<?>> task = new AtomicReference<>();
        CountDownLatch done = new CountDownLatch(1);
        task.set(ticks.scheduleAtFixedRate(() -> {
            if (done.getCount() == 0) {
                return;
            }
            if (sent[0] < events) {
                if (out.emit(new AgentStreamEvent.TextDelta(messageId, sent[0]++ + "@" + micros() + " "))) {
                    return;
                }
            } else {
                out.emit(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
            }
            done.countDown();
        }, offset, period, TimeUnit.MICROSECONDS));
        done.await();
        task.get().cancel(false);
    }

    /** Reads a run to its end over SSE, coming back with its cursor when the host cuts it off. */
    private static Read subscribe(String base, String runId) throws IOException {
        long[] seqs = new long[4096];
        long[] latency = new long[4096];
        int count = 0;
        int samples = 0;
        int reconnects = -1;
        Long cursor = null;
        while (true) {
            reconnects++;
            try (SseClient.Stream stream = SseClient.open(base, "/api/chat/runs/" + runId + "/stream", cursor)) {
                SseClient.Event event;
                while ((event = stream.next()) != null) {
                    long now = micros();
                    if (count == seqs.length) {
                        seqs = Arrays.copyOf(seqs, count * 2);
                    }
                    seqs[count++] = event.seq();
                    cursor = event.seq();
                    long sent = emitted(event.data());
                    if (sent > 0) {
                        if (samples == latency.length) {
                            latency = Arrays.copyOf(latency, samples * 2);
                        }
                        latency[samples++] = now - sent;
                    }
                    if (event.terminal()) {
                        return new Read(Arrays.copyOf(seqs, count), Arrays.copyOf(latency, samples), reconnects);
                    }
                }
            }
            if (reconnects > 1_000) {
                throw new AssertionError("a subscriber of " + runId + " kept being cut off");
            }
        }
    }

    /** The emit time a delta carries ({@code "delta":"<i>@<micros> "}), or 0 for other events. */
    private static long emitted(String data) {
        int at = data.indexOf("\"delta\":\"");
        if (at < 0) {
            return 0;
        }
        int from = data.indexOf('@', at) + 1;
        int to = data.indexOf(' ', from);
        return Long.parseLong(data, from, to, 10);
    }

    private static long micros() {
        Instant now = Instant.now();
        return now.getEpochSecond() * 1_000_000 + now.getNano() / 1_000;
    }

    private static void awaitNoOpenStreams(SseStreams streams) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (streams.openStreams() > 0 && System.nanoTime() < deadline) {
            Rest.sleep(50);
        }
        assertThat(streams.openStreams()).as("SSE streams still open after the round").isZero();
    }

    /** The live threads by name, digits left out (so a pool's threads count as one kind). */
    private static Map<String, Integer> threadKinds() {
        Map<String, Integer> kinds = new TreeMap<>();
        Thread.getAllStackTraces().keySet().forEach(t -> kinds.merge(t.getName().replaceAll("[0-9]+", "#"), 1, Integer::sum));
        return kinds;
    }

    /**
     * The threads outside the pools that grow with the peak of concurrent requests and shrink only after a
     * minute idle (Tomcat's request threads, the JDK HTTP client's workers, this test's readers and its
     * runtime's run threads): a round more crowded than the one before grows those, so only the others (the
     * engine's, the store's, the SSE timer) must stay flat.
     */
    private static int fixedThreads(Map<String, Integer> kinds) {
        return kinds.entrySet().stream().filter(kind -> !ELASTIC_POOLS.matcher(kind.getKey()).matches())
                .mapToInt(Map.Entry::getValue).sum();
    }

    /** The heap in use once the collector has had a few chances to run. */
    private static long settledHeap() {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 5; i++) {
            System.gc();
            Rest.sleep(200);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }
}
