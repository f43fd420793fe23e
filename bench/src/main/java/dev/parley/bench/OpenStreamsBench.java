package dev.parley.bench;

import dev.parley.bench.web.SpringHost;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.model.RunStatus;
import dev.parley.bench.web.SubscriberCounter;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.simulator.BridgeSimulator;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import javax.management.ObjectName;

/**
 * Section 4, open streams: idle SSE subscribers through the starter's endpoint on Tomcat, held by a client
 * in another JVM ({@link OpenStreamsClient}). The streams belong to R runs that wait for a clarify answer,
 * S / R subscribers each (R = 100 by default: the runs themselves cost an adapter thread each, which is not
 * what is measured here). Measured in this JVM, which hosts the application: live heap after full GCs
 * (the class histogram's total, which runs a full GC itself) and the thread count, at 0, 1 000 and S
 * subscribers.
 */
final class OpenStreamsBench {
    /** The starter's settings for many idle streams on Tomcat, as its README recommends them. */
    static final Map<String, String> TOMCAT_SETTINGS = Map.of("parley.web.tomcat.connection-buffer-size", "1KB",
            "parley.web.tomcat.response-buffer-size", "1KB");

    private static final double TOMCAT_TARGET = 32 * 1024;
    private static final double NETTY_TARGET = 16 * 1024;

    private final Env env;

    OpenStreamsBench(Env env) {
        this.env = env;
    }

    /** One measurement point. */
    private record Point(int streams, long liveBytes, long heapUsed, int threads, Map<String, Integer> threadKinds,
            Map<String, long[]> histogram) {
    }

    void run() throws Exception {
        for (String kind : env.options.streamHosts) {
            run(kind.equals("netty"));
        }
    }

    private void run(boolean reactive) throws Exception {
        int total = env.options.streams;
        int runs = Math.min(env.options.streamRuns, total);
        String hostName = reactive ? "WebFlux on Netty (ParleyFlux)" : "the starter's endpoint on Tomcat";
        System.out.println("== 4. Open streams, " + hostName + ": " + total + " idle SSE subscribers over " + runs
                + " runs waiting on a clarify");
        try (BridgeSimulator simulator = Env.simulator(0, 1_000_000)) {
            HermesRuntimeAdapter adapter = Env.adapter(simulator, null);
            Map<String, Object> properties = new HashMap<>();
            properties.put("server.tomcat.max-connections", Integer.toString(total + 2000));
            properties.put("server.tomcat.accept-count", "1000");
            properties.putAll(TOMCAT_SETTINGS);
            try (SpringHost host = SpringHost.start(adapter, new InMemoryChatStore(), properties, reactive)) {
                ChatEngine engine = host.engine();
                SubscriberCounter counter = host.bean(SubscriberCounter.class);
                int threadsBeforeRuns = ManagementFactory.getThreadMXBean().getThreadCount();
                List<String> runIds = startWaitingRuns(engine, runs);
                int threadsAfterRuns = ManagementFactory.getThreadMXBean().getThreadCount();
                Path paths = Files.createTempFile("parley-bench-streams", ".txt");
                List<String> lines = new ArrayList<>();
                for (String runId : runIds) {
                    lines.add(host.streamPath(runId, reactive));
                }
                Files.write(paths, lines);

                double engineOnly = reactive ? Double.NaN : engineSubscribers(engine, runIds, total);
                List<Point> points = new ArrayList<>();
                points.add(measure(0));
                Process client = new ProcessBuilder(Launcher.command(List.of("-Xmx1g", "-Xss256k"),
                        List.of(OpenStreamsClient.MODE, "127.0.0.1", Integer.toString(host.port()), paths.toString())))
                        .redirectError(ProcessBuilder.Redirect.INHERIT)
                        .start();
                try (BufferedReader out = new BufferedReader(new InputStreamReader(client.getInputStream(), StandardCharsets.UTF_8));
                        PrintWriter in = new PrintWriter(client.getOutputStream(), true, StandardCharsets.UTF_8)) {
                    expect(out, "CLIENT READY");
                    int opened = 0;
                    for (int target : new int[] {Math.min(1000, total), total}) {
                        if (target <= opened) {
                            continue;
                        }
                        long start = System.nanoTime();
                        in.println("OPEN " + (target - opened));
                        String answer = expect(out, "OPENED");
                        String[] parts = answer.split(" ");
                        int readyCount = Integer.parseInt(parts[1]);
                        int failed = Integer.parseInt(parts[2]);
                        System.out.printf("   %d streams open (%d failed) in %.1f s; the engine counts %d subscribers%n", readyCount,
                                failed, (System.nanoTime() - start) / 1e9, counter.open());
                        if (readyCount != target || failed > 0) {
                            throw new IllegalStateException("only " + readyCount + " of " + target + " streams opened (" + failed
                                    + " failed)");
                        }
                        waitFor(() -> counter.open() == target, 30);
                        opened = target;
                        points.add(measure(target));
                    }
                    in.println("CLOSE");
                    expect(out, "CLOSED");
                } finally {
                    client.destroy();
                    client.waitFor(10, TimeUnit.SECONDS);
                    Files.deleteIfExists(paths);
                }
                if (reactive) {
                    reportReactive(points, runs);
                } else {
                    report(points, runs, threadsBeforeRuns, threadsAfterRuns, engineOnly);
                }
            }
        }
    }

    private static String settings() {
        return new TreeMap<>(TOMCAT_SETTINGS).entrySet().stream().map(e -> "`" + e.getKey() + "=" + e.getValue() + "`")
                .collect(Collectors.joining(", "));
    }

    private void reportReactive(List<Point> points, int runs) {
        Point zero = points.get(0);
        Point last = points.get(points.size() - 1);
        int n = last.streams();
        double perSubscriber = (double) (last.liveBytes() - zero.liveBytes()) / n;
        StringBuilder threads = new StringBuilder();
        for (Point p : points) {
            if (threads.length() > 0) {
                threads.append(" / ");
            }
            threads.append(p.threads());
        }
        env.report.row("4d", "heap per idle SSE subscriber, the same on WebFlux + Netty (ParleyFlux in a host's functional route)",
                Fmt.kb(perSubscriber) + "; threads at 0 / 1 000 / " + n + ": " + threads, "≤ 16 KB", Fmt.ratio(perSubscriber / NETTY_TARGET),
                perSubscriber <= NETTY_TARGET ? Report.Verdict.MET : Report.Verdict.MISSED);
        env.report.note("4d: heap growth by class on Netty, per subscriber (top 10): " + histogramDiff(zero, last, n, 10)
                + "; by package: " + packageDiff(zero, last, n));
    }

    private List<String> startWaitingRuns(ChatEngine engine, int runs) throws Exception {
        List<String> runIds = new ArrayList<>();
        for (int i = 0; i < runs; i++) {
            String thread = engine.createThread(Env.OWNER, NewThread.empty()).id();
            RunTicket ticket = engine.startRun(Env.OWNER, thread, StartRun.of("clarify please"));
            runIds.add(ticket.runId());
        }
        for (String runId : runIds) {
            waitFor(() -> engine.state(Env.OWNER, runId).run().status() == RunStatus.WAITING_FOR_INPUT, 60);
        }
        return runIds;
    }

    private static String expect(BufferedReader out, String prefix) throws IOException {
        String line;
        while ((line = out.readLine()) != null) {
            if (line.startsWith(prefix)) {
                return line;
            }
            System.out.println("   client: " + line);
        }
        throw new IOException("the stream client ended before saying " + prefix);
    }

    private interface Condition {
        boolean holds();
    }

    private static void waitFor(Condition condition, int seconds) {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.holds()) {
            if (System.nanoTime() > end) {
                throw new IllegalStateException("a condition did not hold within " + seconds + " s");
            }
            Env.sleep(50);
        }
    }

    private Point measure(int streams) throws Exception {
        Env.sleep(1000);
        for (int i = 0; i < 3; i++) {
            System.gc();
            Env.sleep(200);
        }
        long heapUsed = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        Map<String, long[]> histogram = classHistogram();
        long live = histogram.getOrDefault("Total", new long[2])[1];
        Map<String, Integer> kinds = new TreeMap<>();
        for (ThreadInfo info : ManagementFactory.getThreadMXBean().dumpAllThreads(false, false, 0)) {
            kinds.merge(info.getThreadName().replaceAll("[0-9]+", "#"), 1, Integer::sum);
        }
        int threads = ManagementFactory.getThreadMXBean().getThreadCount();
        System.out.printf("   at %d streams: live heap %s (used after GC %s), %d threads%n", streams, Fmt.mb(live),
                Fmt.mb(heapUsed), threads);
        return new Point(streams, live, heapUsed, threads, kinds, histogram);
    }

    /** {@code GC.class_histogram} (a full GC, then the live objects by class): class → {instances, bytes}. */
    static Map<String, long[]> classHistogram() throws Exception {
        ObjectName name = new ObjectName("com.sun.management:type=DiagnosticCommand");
        String text = (String) ManagementFactory.getPlatformMBeanServer().invoke(name, "gcClassHistogram",
                new Object[] {new String[0]}, new String[] {String[].class.getName()});
        Map<String, long[]> classes = new HashMap<>();
        for (String line : text.split("\n")) {
            String[] f = line.trim().split("\\s+");
            if (f.length >= 4 && f[0].endsWith(":")) {
                classes.put(f[3], new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
            } else if (f.length >= 3 && f[0].equals("Total")) {
                classes.put("Total", new long[] {Long.parseLong(f[1]), Long.parseLong(f[2])});
            }
        }
        return classes;
    }

    /**
     * An idle in-process subscriber: it takes the replay up to the run's question (a clarify, which runtimes now
     * send as an input request), then waits; it keeps its subscription to cancel it.
     */
    private static final class IdleSubscriber implements java.util.concurrent.Flow.Subscriber<dev.parley.chat.event.RunEvent> {
        volatile java.util.concurrent.Flow.Subscription subscription;
        final java.util.concurrent.CountDownLatch replayed = new java.util.concurrent.CountDownLatch(1);

        @Override
        public void onSubscribe(java.util.concurrent.Flow.Subscription s) {
            subscription = s;
            s.request(256);
        }

        @Override
        public void onNext(dev.parley.chat.event.RunEvent event) {
            if (event.event() instanceof dev.parley.chat.event.AgentStreamEvent.ClarifyRequested
                    || event.event() instanceof dev.parley.chat.event.AgentStreamEvent.InputRequested) {
                replayed.countDown();
            }
        }

        @Override
        public void onError(Throwable t) {
            replayed.countDown();
        }

        @Override
        public void onComplete() {
            replayed.countDown();
        }
    }

    /**
     * The engine's own share: {@code count} idle in-process subscribers (no HTTP) on the same waiting runs;
     * returns the live heap per subscriber, and cancels them again.
     */
    private double engineSubscribers(ChatEngine engine, List<String> runIds, int count) throws Exception {
        long before = measureLive();
        List<IdleSubscriber> subscribers = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            IdleSubscriber s = new IdleSubscriber();
            engine.subscribe(Env.OWNER, runIds.get(i % runIds.size()), 0).subscribe(s);
            subscribers.add(s);
        }
        for (IdleSubscriber s : subscribers) {
            if (!s.replayed.await(30, TimeUnit.SECONDS)) {
                throw new IllegalStateException("an in-process subscriber got no replay");
            }
        }
        long after = measureLive();
        for (IdleSubscriber s : subscribers) {
            s.subscription.cancel();
        }
        double per = (double) (after - before) / count;
        System.out.printf("   %d idle in-process engine subscribers: %s each%n", count, Fmt.kb(per));
        return per;
    }

    private long measureLive() throws Exception {
        Env.sleep(500);
        System.gc();
        Env.sleep(200);
        return classHistogram().getOrDefault("Total", new long[2])[1];
    }

    private void report(List<Point> points, int runs, int threadsBeforeRuns, int threadsAfterRuns, double engineOnly) {
        Point zero = points.get(0);
        Point last = points.get(points.size() - 1);
        int n = last.streams();
        double perSubscriber = (double) (last.liveBytes() - zero.liveBytes()) / n;
        double perSubscriberUsed = (double) (last.heapUsed() - zero.heapUsed()) / n;
        Report r = env.report;
        r.row("4a", "heap per idle SSE subscriber (" + n + " streams over " + runs + " runs waiting on a clarify, Tomcat with the "
                + "starter's settings for many streams: " + settings() + ")",
                Fmt.kb(perSubscriber) + " (live heap " + Fmt.mb(zero.liveBytes()) + " → " + Fmt.mb(last.liveBytes())
                        + "; used after GC: " + Fmt.kb(perSubscriberUsed) + ")",
                "≤ 32 KB", Fmt.ratio(perSubscriber / TOMCAT_TARGET), perSubscriber <= TOMCAT_TARGET ? Report.Verdict.MET
                        : Report.Verdict.MISSED);
        r.row("4c", "heap per idle in-process engine subscriber (ChatEngine.subscribe, no HTTP): the engine's own share",
                Fmt.kb(engineOnly), "≤ 16 KB", Fmt.ratio(engineOnly / 16384),
                engineOnly <= 16384 ? Report.Verdict.MET : Report.Verdict.MISSED);
        StringBuilder threads = new StringBuilder();
        for (Point p : points) {
            if (threads.length() > 0) {
                threads.append(" / ");
            }
            threads.append(p.threads());
        }
        Point thousand = points.size() > 2 ? points.get(1) : zero;
        boolean flat = last.threads() - thousand.threads() <= 5;
        r.row("4b", "JVM threads at 0 / 1 000 / " + n + " subscribers", threads.toString(),
                "no growth with subscribers (1 000 → " + n + ")", "", flat ? Report.Verdict.MET : Report.Verdict.MISSED);
        r.note("4b: thread kinds that changed from 0 to 1 000 streams: " + threadDiff(zero.threadKinds(), thousand.threadKinds())
                + "; from 1 000 to " + n + ": " + threadDiff(thousand.threadKinds(), last.threadKinds())
                + "; the " + runs + " waiting runs themselves took " + (threadsAfterRuns - threadsBeforeRuns)
                + " threads (the Hermes adapter reads each run's Bridge stream on a thread of its own, and the in-process "
                + "simulator holds two per run)");
        r.note("4a: heap growth by class from 0 to " + n + " streams, per subscriber (top 14): " + histogramDiff(zero, last, n, 14));
        r.note("4a: by package, per subscriber: " + packageDiff(zero, last, n));
    }

    static String threadDiff(Map<String, Integer> before, Map<String, Integer> after) {
        Map<String, Integer> diff = new TreeMap<>();
        for (String k : after.keySet()) {
            int d = after.get(k) - before.getOrDefault(k, 0);
            if (d != 0) {
                diff.put(k, d);
            }
        }
        for (String k : before.keySet()) {
            if (!after.containsKey(k)) {
                diff.put(k, -before.get(k));
            }
        }
        if (diff.isEmpty()) {
            return "none";
        }
        return diff.entrySet().stream().map(e -> "`" + e.getKey() + "` " + (e.getValue() > 0 ? "+" : "") + e.getValue())
                .collect(Collectors.joining(", "));
    }

    private static String histogramDiff(Point zero, Point last, int n, int top) {
        List<Map.Entry<String, Long>> growth = new ArrayList<>();
        for (Map.Entry<String, long[]> e : last.histogram().entrySet()) {
            if (e.getKey().equals("Total")) {
                continue;
            }
            long before = zero.histogram().getOrDefault(e.getKey(), new long[2])[1];
            growth.add(Map.entry(e.getKey(), e.getValue()[1] - before));
        }
        growth.sort(Map.Entry.<String, Long>comparingByValue().reversed());
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < Math.min(top, growth.size()); i++) {
            Map.Entry<String, Long> e = growth.get(i);
            long instances = last.histogram().get(e.getKey())[0] - zero.histogram().getOrDefault(e.getKey(), new long[2])[0];
            if (b.length() > 0) {
                b.append(", ");
            }
            b.append('`').append(shortName(e.getKey())).append("` ").append(String.format(Locale.ROOT, "%.0f B (%.1f objects)",
                    (double) e.getValue() / n, (double) instances / n));
        }
        return b.toString();
    }

    private static String packageDiff(Point zero, Point last, int n) {
        Map<String, Long> byGroup = new TreeMap<>();
        for (Map.Entry<String, long[]> e : last.histogram().entrySet()) {
            if (e.getKey().equals("Total")) {
                continue;
            }
            long d = e.getValue()[1] - zero.histogram().getOrDefault(e.getKey(), new long[2])[1];
            byGroup.merge(group(e.getKey()), d, Long::sum);
        }
        return byGroup.entrySet().stream()
                .filter(e -> Math.abs(e.getValue()) >= n)
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .map(e -> e.getKey() + " " + String.format(Locale.ROOT, "%.0f B", (double) e.getValue() / n))
                .collect(Collectors.joining(", "));
    }

    private static String group(String cls) {
        if (cls.startsWith("dev.parley.")) {
            return "Parley (dev.parley)";
        }
        if (cls.startsWith("org.apache.")) {
            return "Tomcat (org.apache)";
        }
        if (cls.startsWith("org.springframework.")) {
            return "Spring (org.springframework)";
        }
        if (cls.startsWith("io.netty.") || cls.startsWith("reactor.")) {
            return "Netty and Reactor";
        }
        if (cls.startsWith("[") || cls.startsWith("java.") || cls.startsWith("jdk.") || cls.startsWith("sun.")) {
            return "JDK types (byte[], buffers, collections… owned by the above)";
        }
        return "other";
    }

    private static String shortName(String cls) {
        return cls.replace("org.apache.", "o.a.").replace("org.springframework.", "o.s.").replace("java.util.concurrent.", "j.u.c.")
                .replace("java.util.", "j.u.").replace("dev.parley.chat.", "d.p.c.");
    }
}
