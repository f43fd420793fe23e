package dev.parley.bench;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/** Command-line options of the suite. */
final class Options {
    static final List<String> SECTIONS = List.of("relay", "persist", "latency", "streams", "waiting", "naive", "history",
            "search", "models");

    int events = 200_000;
    int rounds = 3;
    /**
     * Rounds run before the measured ones. Three: with one, the relay's rounds still sped up from one
     * measured round to the next (the JIT was still compiling the store paths).
     */
    int warmupRounds = 3;
    int persistEvents = 200_000;
    int latencyRuns = 200;
    double latencyRate = 50;
    int latencyEventsPerRun = 500;
    int naiveEvents = 20_000;
    int naiveLatencyCapSeconds = 60;
    int streams = 10_000;
    int streamRuns = 100;
    /** Section 4e: runs waiting on a clarify answer (the same with --quick: the target is stated for 1 000). */
    int waitingRuns = 1_000;
    int historyMessages = 10_000;
    int historyEvents = 100_000;
    int searchThreads = 10_000;
    int searchMessagesPerThread = 100;
    /** Measured calls of each search query, after a warm-up. */
    int searchReps = 40;
    boolean profile;
    /** Delivery threads of the engines the suite builds (0: the engine's default). */
    int deliveryThreads;
    String out;
    Set<String> only = new LinkedHashSet<>(SECTIONS);
    /** The relay configurations to run (a, a2, b, c, d, e, f); all by default. */
    Set<String> relayConfigs = new LinkedHashSet<>(List.of("a", "a2", "b", "c", "d", "e", "f"));
    /** The latency configurations to run (limit, memory, sqlite); all by default. */
    Set<String> latencyConfigs = new LinkedHashSet<>(List.of("limit", "memory", "sqlite", "memory-d2"));
    /** The open-streams hosts to measure (tomcat: the starter's endpoint; netty: ParleyFlux on WebFlux). */
    Set<String> streamHosts = new LinkedHashSet<>(List.of("tomcat", "netty"));

    static Options parse(String[] args) {
        Options o = new Options();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--quick":
                    o.events = 20_000;
                    o.rounds = 1;
                    o.warmupRounds = 1;
                    o.persistEvents = 20_000;
                    o.latencyRuns = 50;
                    o.latencyEventsPerRun = 100;
                    o.naiveEvents = 2_000;
                    o.naiveLatencyCapSeconds = 20;
                    o.streams = 1_000;
                    o.streamRuns = 10;
                    o.historyMessages = 1_000;
                    o.historyEvents = 10_000;
                    o.searchThreads = 1_000;
                    o.searchReps = 10;
                    break;
                case "--events":
                    o.events = Integer.parseInt(args[++i]);
                    break;
                case "--rounds":
                    o.rounds = Integer.parseInt(args[++i]);
                    break;
                case "--warmup-rounds":
                    o.warmupRounds = Integer.parseInt(args[++i]);
                    break;
                case "--streams":
                    o.streams = Integer.parseInt(args[++i]);
                    break;
                case "--waiting-runs":
                    o.waitingRuns = Integer.parseInt(args[++i]);
                    if (o.waitingRuns < 1) {
                        throw new IllegalArgumentException("--waiting-runs must be positive");
                    }
                    break;
                case "--search-threads":
                    o.searchThreads = Integer.parseInt(args[++i]);
                    break;
                case "--search-messages":
                    o.searchMessagesPerThread = Integer.parseInt(args[++i]);
                    break;
                case "--search-reps":
                    o.searchReps = Integer.parseInt(args[++i]);
                    break;
                case "--configs":
                    o.relayConfigs = new LinkedHashSet<>(List.of(args[++i].split(",")));
                    break;
                case "--latency-configs":
                    o.latencyConfigs = new LinkedHashSet<>(List.of(args[++i].split(",")));
                    break;
                case "--delivery-threads":
                    o.deliveryThreads = Integer.parseInt(args[++i]);
                    break;
                case "--stream-hosts":
                    o.streamHosts = new LinkedHashSet<>(List.of(args[++i].split(",")));
                    break;
                case "--profile":
                    o.profile = true;
                    break;
                case "--out":
                    o.out = args[++i];
                    break;
                case "--only":
                    o.only = new LinkedHashSet<>(List.of(args[++i].split(",")));
                    for (String s : o.only) {
                        if (!SECTIONS.contains(s)) {
                            throw new IllegalArgumentException("unknown section " + s + "; sections: " + SECTIONS);
                        }
                    }
                    break;
                case "--help":
                case "-h":
                    System.out.println("usage: java -jar bench/target/parley-bench.jar [--quick] [--only "
                            + String.join(",", SECTIONS) + "] [--events N] [--rounds N] [--warmup-rounds N] [--streams N] "
                            + "[--waiting-runs N] "
                            + "[--search-threads N] [--search-messages N per thread] [--search-reps N] "
                            + "[--configs a,a2,b,c,d,e,f] [--profile] [--jvm \"JVM flags\"] [--java JDK home or java] [--no-fork] [--out results.md]");
                    System.exit(0);
                    break;
                default:
                    throw new IllegalArgumentException("unknown option " + a + " (try --help)");
            }
        }
        return o;
    }

    boolean runs(String section) {
        return only.contains(section);
    }
}
