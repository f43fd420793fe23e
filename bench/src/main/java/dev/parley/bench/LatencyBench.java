package dev.parley.bench;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.simulator.BridgeSimulator;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import okhttp3.OkHttpClient;
import org.HdrHistogram.ConcurrentHistogram;
import org.HdrHistogram.Histogram;

/**
 * Section 3, added latency: R concurrent runs, each streaming E text deltas at a paced rate (the simulator's
 * {@code eventsPerSecond} paces every run on its own: {@code Agent.pace} keeps one schedule per run), one
 * in-process subscriber per run. For each text delta the latency is the subscriber's receive time minus the
 * frame's {@code tsMicros} (when the simulator produced it), read by a {@link FrameTap} on the adapter's HTTP
 * client; "after the adapter read it" subtracts the time the frame's bytes came off the socket instead.
 */
final class LatencyBench {
    /** Samples of the first events of each run (connection set-up, the first seq reservation) count as start-up. */
    static final int STARTUP_EVENTS = 50;
    /** Samples slower than this are checked against the GC pauses. */
    static final long TAIL_MICROS = 5_000;
    /** ChatEngine's default number of delivery threads. */
    /** The engine's delivery pool before it defaulted to 16 threads: section 3 shows why it changed. */
    static final int OLD_DEFAULT_DELIVERY = 2;
    private static final long HIGHEST_MICROS = 3_600_000_000L;

    /** The latencies of one configuration. */
    static final class Result {
        final Histogram total = new ConcurrentHistogram(HIGHEST_MICROS, 3);
        final Histogram afterRead = new ConcurrentHistogram(HIGHEST_MICROS, 3);
        final Histogram steady = new ConcurrentHistogram(HIGHEST_MICROS, 3);
        volatile long missing;
        /** Samples over {@link #TAIL_MICROS}: {produced, received} in epoch microseconds. */
        final java.util.concurrent.ConcurrentLinkedQueue<long[]> tail = new java.util.concurrent.ConcurrentLinkedQueue<>();
        /** Counts the tail (ConcurrentLinkedQueue.size() walks the whole queue). */
        final java.util.concurrent.atomic.AtomicLong tailKept = new java.util.concurrent.atomic.AtomicLong();
        long tailCount;
        long tailInGc;
        final Stats p99s = new Stats();
        final Stats afterReadP99s = new Stats();
        long wallNanos;
        int runs;
        int eventsPerRun;
        boolean complete = true;
        String storeSummary = "";
        String cpu = "";
        String gc = "";

        void record(long produced, long read, long now, int index) {
            if (produced <= 0) {
                missing++;
                return;
            }
            total.recordValue(Math.max(0, now - produced));
            if (now - produced > TAIL_MICROS && tailKept.incrementAndGet() <= 500_000) {
                tail.add(new long[] {produced, now});
            }
            afterRead.recordValue(Math.max(0, now - read));
            if (index >= STARTUP_EVENTS) {
                steady.recordValue(Math.max(0, now - produced));
            }
        }

        static String describe(Histogram h) {
            if (h.getTotalCount() == 0) {
                return "no samples";
            }
            return "p50 " + Fmt.ms(h.getValueAtPercentile(50) / 1000.0) + " / p99 " + Fmt.ms(h.getValueAtPercentile(99) / 1000.0)
                    + " / max " + Fmt.ms(h.getMaxValue() / 1000.0);
        }

        double p99Millis() {
            return total.getValueAtPercentile(99) / 1000.0;
        }

        /** Adds another round's samples to this pooled result. */
        void merge(Result round) {
            total.add(round.total);
            afterRead.add(round.afterRead);
            steady.add(round.steady);
            missing += round.missing;
            tailCount += round.tailCount;
            tailInGc += Double.isNaN((double) round.tailInGc) ? 0 : round.tailInGc;
            p99s.add(round.p99Millis());
            afterReadP99s.add(round.afterRead.getValueAtPercentile(99) / 1000.0);
            runs = round.runs;
            eventsPerRun = round.eventsPerRun;
            cpu = round.cpu;
            gc = (gc.isEmpty() ? "" : gc + " | ") + round.gc;
            storeSummary = round.storeSummary;
        }

        String tailNote() {
            return tailCount == 0 ? "no sample above " + TAIL_MICROS / 1000 + " ms"
                    : tailCount + " samples above " + TAIL_MICROS / 1000 + " ms, " + String.format(java.util.Locale.ROOT, "%.1f %%", 100.0 * tailInGc / tailCount)
                            + " of them overlapping a GC pause";
        }
    }

    private final Env env;
    private final Map<String, Result> results = new LinkedHashMap<>();

    LatencyBench(Env env) {
        this.env = env;
    }

    Map<String, Result> results() {
        return results;
    }

    void run() throws Exception {
        int runs = env.options.latencyRuns;
        int events = env.options.latencyEventsPerRun;
        double rate = env.options.latencyRate;
        System.out.println("== 3. Added latency: " + runs + " runs × " + Fmt.num(rate) + " events/s each, " + events
                + " events per run, " + env.options.rounds + " rounds (limit, in-memory, SQLite, in-memory with " + OLD_DEFAULT_DELIVERY + " delivery threads, "
                + "in turn)");
        FrameTap tap = new FrameTap(events);
        try (BridgeSimulator simulator = Env.simulator(rate, 4L * runs * (events + 10))) {
            OkHttpClient client = new OkHttpClient.Builder().addInterceptor(tap).build();
            HermesRuntimeAdapter adapter = Env.adapter(simulator, client);
            try {
                int warmRuns = Math.max(10, runs / 4);
                int warmEvents = Math.max(STARTUP_EVENTS * 2, events / 5);
                limit(simulator, warmRuns, warmEvents);
                round(adapter, tap, InMemoryChatStore::new, warmRuns, warmEvents);
                round(adapter, tap, () -> env.databases.newSqliteStore("latency"), warmRuns, warmEvents);
                List<String> keys = new ArrayList<>(List.of("limit", "memory", "sqlite", "memory-d2"));
                keys.retainAll(env.options.latencyConfigs);
                for (String key : keys) {
                    results.put(key, new Result());
                }
                for (int r = 0; r < env.options.rounds; r++) {
                    for (String key : keys) {
                        Env.settle();
                        Result one = key.equals("limit") ? limit(simulator, runs, events)
                                : key.equals("memory-d2") ? round(adapter, tap, InMemoryChatStore::new, runs, events, OLD_DEFAULT_DELIVERY)
                                : round(adapter, tap, key.equals("memory") ? InMemoryChatStore::new
                                        : () -> env.databases.newSqliteStore("latency"), runs, events);
                        results.get(key).merge(one);
                        System.out.println("   " + key + " round " + (r + 1) + ": " + Result.describe(one.total)
                                + (key.equals("limit") ? "" : "; after the adapter's read " + Result.describe(one.afterRead))
                                + "; " + one.total.getTotalCount() + " samples; GC " + one.gc);
                    }
                }
            } finally {
                adapter.close();
                client.dispatcher().executorService().shutdown();
                client.connectionPool().evictAll();
            }
        }
        report(rate, runs, events);
    }

    /** Starts {@code runs} runs, spread over one second, each with its subscriber, and waits for all. */
    Result round(HermesRuntimeAdapter adapter, FrameTap tap, Supplier<ChatStore> stores, int runs, int events)
            throws Exception {
        return round(adapter, tap, stores, runs, events, env.options.deliveryThreads);
    }

    Result round(HermesRuntimeAdapter adapter, FrameTap tap, Supplier<ChatStore> stores, int runs, int events,
            int deliveryThreads) throws Exception {
        RecordingStore store = new RecordingStore(stores.get());
        ChatEngine.Builder builder = ChatEngine.builder().runtime(adapter).store(store.store());
        if (deliveryThreads > 0) {
            builder.deliveryThreads(deliveryThreads);
        }
        ChatEngine engine = builder.build();
        Result result = new Result();
        result.runs = runs;
        result.eventsPerRun = events;
        try {
            List<String> threads = new ArrayList<>();
            for (int i = 0; i < runs; i++) {
                threads.add(engine.createThread(Env.OWNER, NewThread.empty()).id());
            }
            List<EngineSubscriber> subscribers = new ArrayList<>();
            List<String> runIds = new ArrayList<>();
            long[] offsets = startOffsets(runs);
            GcMeter gc = new GcMeter();
            CpuMeter cpu = new CpuMeter().start();
            long start = System.nanoTime();
            for (int i = 0; i < runs; i++) {
                long wait = start + offsets[i] - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
                RunTicket ticket = engine.startRun(Env.OWNER, threads.get(i), StartRun.of("long " + events));
                String runId = ticket.runId();
                runIds.add(runId);
                FrameTap.RunTimes times = tap.times(runId);
                subscribers.add(new EngineSubscriber(engine, runId, event -> {
                    long now = FrameTap.nowMicros();
                    int index = FrameTap.tokenIndex(((AgentStreamEvent.TextDelta) event.event()).delta());
                    if (index >= 0 && index < times.produced.length) {
                        result.record(times.produced[index], times.read[index], now, index);
                    }
                }).start());
            }
            long timeout = (long) (events / env.options.latencyRate) + 120;
            for (EngineSubscriber s : subscribers) {
                s.await(timeout);
                if (s.textDeltas() != events) {
                    throw new IllegalStateException("a latency subscriber saw " + s.textDeltas() + " of " + events);
                }
            }
            result.wallNanos = System.nanoTime() - start;
            result.cpu = cpu.stop().perEvent((long) runs * events);
            result.tailCount = result.tailKept.get();
            result.tailInGc = Math.round(gc.shareOverlapping(result.tail) * result.tail.size());
            result.gc = gc.summary();
            result.storeSummary = store.summary(result.wallNanos / 1e9);
            for (String runId : runIds) {
                tap.forget(runId);
            }
        } finally {
            engine.close();
            store.close();
        }
        return result;
    }

    /**
     * When each run starts, in nanoseconds from the first: at random over one second (seeded, so every
     * configuration gets the same schedule). The simulator paces each run from its start, so the runs' frames
     * come at random phases, as independent conversations would.
     */
    static long[] startOffsets(int runs) {
        java.util.Random random = new java.util.Random(42);
        long[] offsets = new long[runs];
        for (int i = 0; i < runs; i++) {
            offsets[i] = (long) (random.nextDouble() * 1_000_000_000L);
        }
        java.util.Arrays.sort(offsets);
        return offsets;
    }

    /**
     * The latency limit: the same runs on the same simulator read by plain OkHttp EventSource readers, one
     * thread per stream (as the adapter reads), doing nothing but take the time of each text delta.
     */
    private Result limit(BridgeSimulator simulator, int runs, int events) throws Exception {
        Result result = new Result();
        result.runs = runs;
        result.eventsPerRun = events;
        OkHttpClient client = new OkHttpClient.Builder().readTimeout(java.time.Duration.ofSeconds(120)).build();
        java.util.concurrent.ExecutorService readers = java.util.concurrent.Executors.newCachedThreadPool();
        try {
            long[] offsets = startOffsets(runs);
            java.util.concurrent.CountDownLatch done = new java.util.concurrent.CountDownLatch(runs);
            java.util.concurrent.atomic.AtomicLong deltas = new java.util.concurrent.atomic.AtomicLong();
            GcMeter gc = new GcMeter();
            CpuMeter cpu = new CpuMeter().start();
            long start = System.nanoTime();
            for (int i = 0; i < runs; i++) {
                long wait = start + offsets[i] - System.nanoTime();
                if (wait > 0) {
                    Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                }
                String body = "{\"runId\":\"limit-" + java.util.UUID.randomUUID() + "\",\"userMessage\":\"long " + events + "\"}";
                okhttp3.Request request = new okhttp3.Request.Builder().url(simulator.baseUrl() + "/run")
                        .header("Accept", "text/event-stream")
                        .post(okhttp3.RequestBody.create(body, Env.JSON_TYPE)).build();
                readers.execute(() -> {
                    try (okhttp3.Response response = client.newCall(request).execute()) {
                        okhttp3.sse.EventSources.processResponse(response, new okhttp3.sse.EventSourceListener() {
                            @Override
                            public void onEvent(okhttp3.sse.EventSource source, String id, String type, String data) {
                                if ("text_delta".equals(type)) {
                                    long now = FrameTap.nowMicros();
                                    int at = data.indexOf("\"tsMicros\":");
                                    long ts = 0;
                                    for (int k = at + 11; k < data.length() && Character.isDigit(data.charAt(k)); k++) {
                                        ts = ts * 10 + (data.charAt(k) - '0');
                                    }
                                    int index = data.indexOf("\"text\":\"t");
                                    int token = index < 0 ? -1 : FrameTap.tokenIndex(data.substring(index + 8));
                                    result.record(ts, now, now, token);
                                    deltas.incrementAndGet();
                                }
                            }
                        });
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    } finally {
                        done.countDown();
                    }
                });
            }
            if (!done.await((long) (events / env.options.latencyRate) + 120, java.util.concurrent.TimeUnit.SECONDS)
                    || deltas.get() != (long) runs * events) {
                throw new IllegalStateException("the latency limit readers saw " + deltas.get() + " deltas");
            }
            result.wallNanos = System.nanoTime() - start;
            result.cpu = cpu.stop().perEvent((long) runs * events);
            result.tailCount = result.tailKept.get();
            result.tailInGc = Math.round(gc.shareOverlapping(result.tail) * result.tail.size());
            result.gc = gc.summary();
        } finally {
            readers.shutdownNow();
            client.dispatcher().executorService().shutdown();
            client.connectionPool().evictAll();
        }
        return result;
    }

    private void report(double rate, int runs, int events) {
        Report r = env.report;
        Result limit = results.get("limit");
        if (limit == null) {
            results.forEach((k, v) -> r.row("3-" + k, "latency " + k, Result.describe(v.total), "", "", Report.Verdict.INFO));
            return;
        }
        r.row("3", "latency limit: the same runs read by plain OkHttp EventSource readers (thread per stream), frame produced → read "
                + "(" + runs + " runs × " + Fmt.num(rate) + " ev/s, " + events + " events each)",
                "p99 per round " + limit.p99s.describe("ms") + " (pooled " + Result.describe(limit.total) + ")", "the limit", "",
                Report.Verdict.INFO);
        r.note("3 limit: without each run's first " + STARTUP_EVENTS + " events " + Result.describe(limit.steady) + "; "
                + limit.tailNote() + "; CPU per event (last round): " + limit.cpu + "; GC per round: " + limit.gc);
        for (Map.Entry<String, Result> e : results.entrySet()) {
            if (e.getKey().equals("limit")) {
                continue;
            }
            Result res = e.getValue();
            boolean diagnostic = e.getKey().equals("memory-d2");
            String id = e.getKey().equals("memory") ? "3a" : e.getKey().equals("sqlite") ? "3b" : "3c";
            String store = e.getKey().equals("sqlite") ? "SQLite store" : "in-memory store";
            double added = res.p99s.median() - limit.p99s.median();
            double own = res.afterRead.getValueAtPercentile(99) / 1000.0;
            r.row(id, (diagnostic ? "(diagnostic) 3a with deliveryThreads(" + OLD_DEFAULT_DELIVERY + "), the engine's old default, instead of "
                    + ChatEngine.Builder.DEFAULT_DELIVERY_THREADS + ", " : "")
                    + "added latency, " + runs + " runs × " + Fmt.num(rate) + " ev/s, " + store
                    + ": adapter's socket read → subscriber (and frame produced → subscriber)",
                    "p99 " + Fmt.ms(own) + " (per round " + res.afterReadP99s.describe("ms") + "); frame → subscriber p99 per round "
                            + res.p99s.describe("ms") + ", i.e. " + Fmt.ms(added) + " over the limit's",
                    "p99 ≤ 5 ms added", Fmt.ratio(own / 5.0),
                    diagnostic ? Report.Verdict.INFO : own <= 5.0 ? Report.Verdict.MET : Report.Verdict.MISSED);
            r.note(id + " (" + store + (diagnostic ? ", " + OLD_DEFAULT_DELIVERY + " delivery threads" : "") + "): " + res.total.getTotalCount()
                    + " samples (" + res.missing + " without a frame time); from the adapter's socket read to the subscriber "
                    + Result.describe(res.afterRead) + "; without each run's first " + STARTUP_EVENTS + " events "
                    + Result.describe(res.steady) + "; " + res.tailNote() + "; CPU per event (last round): " + res.cpu
                    + "; GC per round: " + res.gc + "; store (last round): " + res.storeSummary);
        }
        r.note("3: \"added\" is measured inside the process, from the moment the adapter's socket read returned the frame's bytes "
                + "to the subscriber's onNext (SSE parsing, JSON, the engine, the delivery hop): the limit pays none of it. The "
                + "frame-to-subscriber figures also hold the simulator, the kernel and the wait for a reader thread to be scheduled; "
                + "their round-to-round spread on this 2-vCPU machine is larger than the 5 ms target, so their difference to the "
                + "limit is shown but not judged.");
        r.note("3: the LONG scenario's text deltas carry their token index (\"t<i> \"), not a time, and the engine's events do "
                + "not carry the frame's tsMicros: the bench reads tsMicros from the frames' bytes as the adapter reads them "
                + "(an OkHttp interceptor on the adapter's client) and joins on run id and token index. Same host, same clock.");
    }
}
