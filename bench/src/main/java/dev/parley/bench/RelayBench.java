package dev.parley.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.bench.web.SpringHost;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.simulator.BridgeSimulator;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.sse.EventSource;
import okhttp3.sse.EventSourceListener;
import okhttp3.sse.EventSources;

/**
 * Section 1, relay throughput: the simulator streams N small text deltas over loopback SSE as fast as it
 * can; each configuration is timed from the request (or {@code startRun}) until its subscriber(s) received
 * the terminal event. Configurations run round-robin (a warm-up round, then the measured rounds), so drift
 * hits them alike; the median is reported with min and max.
 */
final class RelayBench {
    /** The limit runs are short (well under a second) and noisy: each round runs them this many times. */
    private static final int LIMIT_REPEATS = 5;
    private final Env env;
    private final int n;
    /** Filled by the engine configurations: what the store did in the last measured rep. */
    private final Map<String, String> storeSummaries = new LinkedHashMap<>();
    private final Map<String, Integer> resubscribes = new LinkedHashMap<>();
    private final Map<String, Stats> results = new LinkedHashMap<>();
    private final Map<String, String> cpu = new LinkedHashMap<>();
    private final Map<String, Stats> cpuMicros = new LinkedHashMap<>();
    /** Per engine configuration: milliseconds from the last text delta to the terminal event (the run's end). */
    private final Map<String, Stats> runEndMillis = new LinkedHashMap<>();
    private boolean measuring;

    RelayBench(Env env) {
        this.env = env;
        this.n = env.options.events;
    }

    Map<String, Stats> results() {
        return results;
    }

    private interface Config {
        /** Runs once and returns the elapsed nanoseconds; starts the meter when its clock starts, stops it at the end. */
        long run(CpuMeter meter) throws Exception;
    }

    void run() throws Exception {
        System.out.println("== 1. Relay throughput: N = " + n + " text deltas per run");
        try (BridgeSimulator simulator = Env.simulator(0, 3L * n + 10)) {
            HermesRuntimeAdapter adapter = Env.adapter(simulator, null);
            HermesRuntimeAdapter springAdapter = Env.adapter(simulator, null);
            InMemoryChatStore springStore = new InMemoryChatStore();
            try (SpringHost host = SpringHost.start(springAdapter, springStore, Map.of())) {
                Map<String, Config> configs = new LinkedHashMap<>();
                configs.put("a", m -> limit(simulator, false, m));
                configs.put("a2", m -> limit(simulator, true, m));
                configs.put("b", m -> engine("b", adapter, InMemoryChatStore::new, 1, m));
                configs.put("c", m -> engine("c", adapter, () -> env.databases.newSqliteStore("relay"), 1, m));
                configs.put("d", m -> engine("d", adapter, () -> env.databases.newPostgresStore("relay"), 1, m));
                configs.put("e", m -> engine("e", adapter, InMemoryChatStore::new, 10, m));
                configs.put("f", m -> web(host, m));
                configs.keySet().retainAll(env.options.relayConfigs);
                int rounds = env.options.warmupRounds + env.options.rounds;
                for (int round = 0; round < rounds; round++) {
                    boolean warm = round < env.options.warmupRounds;
                    boolean last = round == rounds - 1;
                    for (Map.Entry<String, Config> c : configs.entrySet()) {
                      int times = c.getKey().startsWith("a") ? LIMIT_REPEATS : 1;
                      for (int t = 0; t < times; t++) {
                        Env.settle();
                        Sampler sampler = last && env.options.profile ? new Sampler(10) : null;
                        long nanos;
                        CpuMeter meter = new CpuMeter();
                        measuring = !warm;
                        try {
                            nanos = c.getValue().run(meter);
                            cpu.put(c.getKey(), meter.perEvent(n));
                            if (!warm) {
                                cpuMicros.computeIfAbsent(c.getKey(), k -> new Stats()).add(meter.totalMicrosPerEvent(n));
                            }
                        } finally {
                            if (sampler != null) {
                                sampler.close();
                                env.report.note(sampler.summary("1" + c.getKey(), 8));
                            }
                        }
                        double rate = n / (nanos / 1e9);
                        System.out.printf("   %s round %d%s: %.3f s, %,.0f events/s%n", c.getKey(), round + 1,
                                warm ? " (warm-up)" : "", nanos / 1e9, rate);
                        if (!warm) {
                            results.computeIfAbsent(c.getKey(), k -> new Stats()).add(rate);
                        }
                      }
                    }
                }
            } finally {
                adapter.close();
            }
        }
        report();
    }

    private void report() {
        Report r = env.report;
        if (!results.containsKey("a")) {
            results.forEach((k, v) -> r.row("1" + k, "relay configuration " + k, v.describe("ev/s"), "", "", Report.Verdict.INFO));
            return;
        }
        double a = results.get("a").median();
        r.row("1a", "relay limit: OkHttp EventSource reads the simulator's stream, nothing else", results.get("a").describe("ev/s"),
                "the limit", "1.00", Report.Verdict.INFO);
        row("1a2", "(diagnostic) EventSource + Jackson readTree per frame (what the adapter parses)", "a2", a, Double.NaN);
        row("1b", "adapter → engine → in-memory store → 1 subscriber", "b", a, 0.5);
        row("1c", "(b) with the SQLite store", "c", a, 0.5);
        row("1d", "(b) with the PostgreSQL store", "d", a, 0.35);
        row("1e", "(b) with 10 subscribers", "e", a, 0.4);
        row("1f", "through the starter's SSE endpoint (Tomcat) to an HTTP client", "f", a, 0.25);
        if (cpuMicros.containsKey("a")) {
            double limitCpu = cpuMicros.get("a").median();
            StringBuilder b = new StringBuilder();
            for (Map.Entry<String, Stats> e : cpuMicros.entrySet()) {
                if (b.length() > 0) {
                    b.append("; ");
                }
                b.append('(').append(e.getKey()).append(") ").append(Fmt.num(e.getValue().median())).append(" µs");
                if (!e.getKey().equals("a")) {
                    b.append(" → ").append(Fmt.ratio(limitCpu / e.getValue().median()));
                }
            }
            r.note("1: JVM CPU time per event (median of the measured reps; the PostgreSQL server's own CPU not included) and the "
                    + "limit's CPU per event over it — on this CPU-bound 2-core machine the throughput ratios follow these, with "
                    + "less noise: " + b);
        }
        for (Map.Entry<String, String> c : cpu.entrySet()) {
            r.note("1" + c.getKey() + " CPU per event by thread (last rep): " + c.getValue());
        }
        if (!runEndMillis.isEmpty()) {
            StringBuilder b = new StringBuilder();
            runEndMillis.forEach((k, v) -> b.append(b.length() > 0 ? "; " : "").append('(').append(k).append(") ")
                    .append(v.describe("ms")));
            r.note("1: the run's end, from the last text delta to the terminal event (the final answer arrives whole, "
                    + "then is stored with the run's end before the terminal event is shown), counted in each time: " + b);
        }
        for (Map.Entry<String, String> s : storeSummaries.entrySet()) {
            r.note("1" + s.getKey() + " store share (last rep): " + s.getValue());
        }
        for (Map.Entry<String, Integer> s : resubscribes.entrySet()) {
            if (s.getValue() > 0) {
                r.note("1" + s.getKey() + ": subscribers were cut off as slow consumers and resubscribed " + s.getValue()
                        + " times in all (counted in the time)");
            }
        }
    }

    private void row(String id, String what, String key, double limit, double target) {
        Stats s = results.get(key);
        if (s == null) {
            return;
        }
        double ratio = s.median() / limit;
        Report.Verdict verdict = Double.isNaN(target) ? Report.Verdict.INFO
                : ratio >= target ? Report.Verdict.MET : Report.Verdict.MISSED;
        env.report.row(id, what, s.describe("ev/s"), Double.isNaN(target) ? "see 2" : "≥ " + target + " × (a)",
                Fmt.ratio(ratio), verdict);
    }

    // ------------------------------------------------------------------ (a) the limit

    /** POST /run and read the SSE stream with OkHttp's EventSource parser on this thread (as the adapter does). */
    private long limit(BridgeSimulator simulator, boolean parseJson, CpuMeter meter) throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        String body = "{\"runId\":\"limit-" + UUID.randomUUID() + "\",\"userMessage\":\"long " + n + "\"}";
        Request request = new Request.Builder().url(simulator.baseUrl() + "/run")
                .header("Accept", "text/event-stream")
                .post(RequestBody.create(body, Env.JSON_TYPE)).build();
        long[] counts = new long[2];
        meter.start();
        long start = System.nanoTime();
        try (Response response = env.http.newCall(request).execute()) {
            EventSources.processResponse(response, new EventSourceListener() {
                @Override
                public void onEvent(EventSource source, String id, String type, String data) {
                    if (parseJson) {
                        try {
                            JsonNode node = mapper.readTree(data);
                            if (node.path("seq").asLong() <= 0) {
                                throw new IllegalStateException("a frame without seq");
                            }
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    }
                    if ("text_delta".equals(type)) {
                        counts[0]++;
                    } else if ("done".equals(type)) {
                        counts[1] = System.nanoTime();
                    }
                }
            });
        }
        meter.stop();
        if (counts[0] != n || counts[1] == 0) {
            throw new IllegalStateException("the limit reader saw " + counts[0] + " deltas of " + n);
        }
        return counts[1] - start;
    }

    // ------------------------------------------------------------------ (b) to (e) the engine

    private long engine(String key, HermesRuntimeAdapter adapter, Supplier<ChatStore> stores, int subscribers,
            CpuMeter meter) throws Exception {
        RecordingStore store = new RecordingStore(stores.get());
        ChatEngine engine = ChatEngine.builder().runtime(adapter).store(store.store()).build();
        try {
            String thread = engine.createThread(Env.OWNER, NewThread.empty()).id();
            meter.start();
            long start = System.nanoTime();
            RunTicket ticket = engine.startRun(Env.OWNER, thread, StartRun.of("long " + n));
            List<EngineSubscriber> subs = new ArrayList<>();
            for (int i = 0; i < subscribers; i++) {
                subs.add(new EngineSubscriber(engine, ticket.runId(), null).start());
            }
            long end = 0;
            long lastDelta = 0;
            int cut = 0;
            for (EngineSubscriber s : subs) {
                end = Math.max(end, s.await(600));
                lastDelta = Math.max(lastDelta, s.lastTextDeltaNanos());
                cut += s.resubscribes();
                check(s.terminal(), s.textDeltas());
            }
            if (measuring) {
                runEndMillis.computeIfAbsent(key, k -> new Stats()).add((end - lastDelta) / 1e6);
            }
            meter.stop();
            long elapsed = end - start;
            storeSummaries.put(key, store.summary(elapsed / 1e9));
            resubscribes.merge(key, cut, Integer::sum);
            return elapsed;
        } finally {
            engine.close();
            store.close();
        }
    }

    private void check(AgentStreamEvent terminal, long deltas) {
        if (!(terminal instanceof AgentStreamEvent.RunFinished)
                || ((AgentStreamEvent.RunFinished) terminal).status() != RunStatus.SUCCEEDED) {
            throw new IllegalStateException("the run did not succeed: " + terminal);
        }
        if (deltas != n) {
            throw new IllegalStateException("a subscriber saw " + deltas + " text deltas of " + n);
        }
    }

    // ------------------------------------------------------------------ (f) the starter's SSE endpoint

    private long web(SpringHost host, CpuMeter meter) throws IOException {
        String base = host.baseUrl();
        String thread = env.postJson(base + "/sessions", "{}").path("id").asText();
        meter.start();
        long start = System.nanoTime();
        String runId = env.postJson(base + "/sessions/" + thread + "/runs", "{\"message\":\"long " + n + "\"}")
                .path("runId").asText();
        long[] state = new long[4]; // deltas, terminal time, last seq, reconnects
        String[] terminalType = new String[1];
        while (state[1] == 0) {
            Request.Builder request = new Request.Builder().url(base + "/runs/" + runId + "/stream")
                    .header("Accept", "text/event-stream");
            if (state[2] > 0) {
                request.header("Last-Event-ID", Long.toString(state[2]));
                state[3]++;
            }
            try (Response response = env.http.newCall(request.build()).execute()) {
                if (!response.isSuccessful()) {
                    throw new IOException("GET stream answered " + response.code());
                }
                EventSources.processResponse(response, new EventSourceListener() {
                    @Override
                    public void onEvent(EventSource source, String id, String type, String data) {
                        if (id != null) {
                            state[2] = Long.parseLong(id);
                        }
                        if ("text_delta".equals(type)) {
                            state[0]++;
                        } else if ("run_finished".equals(type) || "run_failed".equals(type)) {
                            state[1] = System.nanoTime();
                            terminalType[0] = type + " " + data;
                        }
                    }
                });
            }
            if (state[3] > 100) {
                throw new IllegalStateException("the SSE stream kept closing early");
            }
        }
        meter.stop();
        long elapsed = state[1] - start;
        if (!terminalType[0].startsWith("run_finished") || !terminalType[0].contains("SUCCEEDED") || state[0] != n) {
            throw new IllegalStateException("the web run ended with " + terminalType[0] + " after " + state[0] + " deltas");
        }
        resubscribes.merge("f", (int) state[3], Integer::sum);
        env.delete(base + "/sessions/" + thread);
        return elapsed;
    }
}
