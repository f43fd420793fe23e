package dev.parley.simulation;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Test;

/**
 * Runs simulations (see {@link Simulation}) for a time budget per configuration and fails with the shortest
 * failing history found, its seed and the command that replays it.
 *
 * <ul>
 *   <li>{@code -Dparley.sim=ci} (the default, inside {@code mvn verify}): seeds 1, 2, 3 … on the in-memory
 *       store alone and as two instances, and on a SQLite file, about two minutes in all.</li>
 *   <li>{@code -Dparley.sim=long -Dparley.sim.seconds=3600}: the release check; fresh seeds (printed), every
 *       store, PostgreSQL with two instances included.</li>
 *   <li>{@code -Dparley.sim=replay -Dparley.sim.replay=<what a failure printed>}: one case again.</li>
 * </ul>
 * The figures of each run (simulations, operations, faults, checks, failures) go to
 * {@code target/simulation-figures.txt}.
 */
class SimulationTest {
    private static final Path WORK = Path.of("target", "simulation");
    private static final int STEPS = 60;

    private record Configuration(Stores store, int instances, double faults, long seconds) {
        String name() {
            return store + (instances > 1 ? " x" + instances : "") + (faults > 0 ? "" : " no faults");
        }
    }

    @Test
    void theEnginesPromisesHoldUnderSeededOperationsAndFaults() throws IOException {
        Files.createDirectories(WORK);
        String mode = System.getProperty("parley.sim", "ci");
        if (mode.isBlank()) {
            mode = "ci";
        }
        if (mode.equals("replay")) {
            replay(System.getProperty("parley.sim.replay", ""));
            return;
        }
        boolean ci = mode.equals("ci");
        long seconds = Long.getLong("parley.sim.seconds", ci ? 120 : 3600);
        List<Configuration> configurations = configurations(ci, seconds);
        String seedProperty = System.getProperty("parley.sim.seed", "");
        long firstSeed = !seedProperty.isBlank() ? Long.parseLong(seedProperty)
                : ci ? 1 : ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE / 2);
        List<String> failures = new ArrayList<>();
        StringBuilder figures = new StringBuilder("simulation, setting " + mode + ", first seed " + firstSeed + "\n");
        for (Configuration configuration : configurations) {
            long deadline = System.nanoTime() + configuration.seconds() * 1_000_000_000L;
            long seed = firstSeed;
            int simulations = 0;
            long operations = 0;
            long checks = 0;
            long faults = 0;
            int failed = 0;
            long started = System.nanoTime();
            String firstFailure = "";
            while (System.nanoTime() < deadline) {
                Simulation.Settings settings = new Simulation.Settings(seed++, STEPS, configuration.store(),
                        configuration.instances(), configuration.faults());
                Simulation.Outcome outcome = Simulation.run(settings, null, WORK);
                simulations++;
                operations += outcome.ran().size();
                checks += outcome.checks();
                faults += outcome.faults();
                if (outcome.failed()) {
                    failed++;
                    firstFailure = String.format(" (seed %d after %.0f s: %s)", settings.seed(),
                            (System.nanoTime() - started) / 1e9, outcome.invariant());
                    failures.add(explain(outcome));
                    break;
                }
            }
            figures.append(String.format("%-22s %5d simulations, %6d operations, %6d faults, %7d checks, %d failed%s%n",
                    configuration.name(), simulations, operations, faults, checks, failed, firstFailure));
        }
        Files.writeString(Path.of(System.getProperty("parley.sim.figures", "target/simulation-figures.txt")),
                figures.toString(), StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING);
        System.out.print(figures);
        assertThat(failures).as("broken promises").isEmpty();
    }

    private static List<Configuration> configurations(boolean ci, long seconds) {
        String only = System.getProperty("parley.sim.stores", "");
        List<Configuration> all = new ArrayList<>();
        if (ci) {
            all.add(new Configuration(Stores.MEMORY, 1, 0.02, seconds * 30 / 100));
            all.add(new Configuration(Stores.MEMORY, 2, 0.02, seconds * 40 / 100));
            all.add(new Configuration(Stores.SQLITE, 1, 0.02, seconds * 30 / 100));
        } else {
            all.add(new Configuration(Stores.MEMORY, 1, 0.03, seconds * 20 / 100));
            all.add(new Configuration(Stores.MEMORY, 2, 0.03, seconds * 25 / 100));
            all.add(new Configuration(Stores.SQLITE, 1, 0.03, seconds * 20 / 100));
            all.add(new Configuration(Stores.POSTGRES, 1, 0.03, seconds * 10 / 100));
            all.add(new Configuration(Stores.POSTGRES, 2, 0.03, seconds * 25 / 100));
        }
        return only.isBlank() ? all : all.stream().filter(c -> Set.of(only.split(",")).contains(c.store().name()))
                .toList();
    }

    /** Shrinks a failing simulation and says what broke, how, and how to replay it. */
    private static String explain(Simulation.Outcome failed) {
        Simulation.Outcome shortest = new Shrinker(WORK, Long.getLong("parley.sim.shrink.millis", 60_000))
                .shrink(failed);
        Set<Integer> ids = new java.util.TreeSet<>(shortest.ran().stream().map(Op::id).toList());
        StringBuilder text = new StringBuilder();
        text.append("\n").append(failed.settings().store()).append(" x").append(failed.settings().instances())
                .append(", seed ").append(failed.settings().seed()).append(": ").append(shortest.violations().get(0))
                .append("\n  all broken promises: ").append(shortest.violations())
                .append("\n  shortest history found (").append(shortest.ran().size()).append(" of ")
                .append(failed.ran().size()).append(" operations):");
        shortest.ran().forEach(op -> text.append("\n    ").append(op));
        text.append(engineLogAbout(shortest.violations().get(0)));
        text.append("\n  replay: mvn -B -pl simulation -am verify -Dtest=SimulationTest "
                + "-Dsurefire.failIfNoSpecifiedTests=false -Dparley.sim=replay -Dparley.sim.replay=")
                .append(failed.settings().describe(ids)).append("\n");
        return text.toString();
    }

    /** The engines' log lines about the runs a broken promise names (the log of the whole test run). */
    private static String engineLogAbout(String violation) {
        Path log = Path.of("target", "simulation-engine.log");
        java.util.regex.Matcher ids = java.util.regex.Pattern.compile("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
                .matcher(violation);
        java.util.Set<String> runIds = new java.util.LinkedHashSet<>();
        while (ids.find()) {
            runIds.add(ids.group());
        }
        if (runIds.isEmpty() || !Files.exists(log)) {
            return "";
        }
        try (java.util.stream.Stream<String> lines = Files.lines(log)) {
            List<String> about = lines.filter(line -> runIds.stream().anyMatch(line::contains)).limit(40).toList();
            return about.isEmpty() ? "" : "\n  the engines' log about " + runIds + ":\n    " + String.join("\n    ", about);
        } catch (IOException | UncheckedIOException e) {
            return "";
        }
    }

    private static void replay(String text) {
        Simulation.Settings settings = Simulation.Settings.parse(text);
        Simulation.Outcome outcome = Simulation.run(settings, Simulation.Settings.parseOps(text), WORK);
        System.out.println("replayed " + settings.describe(null) + ": " + outcome.ran().size() + " operations, "
                + (outcome.failed() ? "broke " + outcome.violations() : "every promise held"));
        outcome.ran().forEach(op -> System.out.println("  " + op));
        assertThat(outcome.violations()).as("broken promises").isEmpty();
    }
}
