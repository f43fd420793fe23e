package dev.parley.bench;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Parley's benchmark suite: relay throughput, persistence, added latency, a naive peer, open streams and
 * history, each side by side with its limit or target. One command runs it and prints one table:
 * {@code java -jar bench/target/parley-bench.jar} (see {@code docs/BENCHMARKS.md}).
 *
 * <p>The command forks one measuring JVM with fixed heap settings ({@link #FORK_JVM_ARGS}, plus anything
 * given with {@code --jvm "..."}), so results do not depend on how the suite was launched; {@code --java PATH}
 * (a JDK home or a java executable) chooses the measuring JVM's Java, e.g. to compare Java 17 with 25, and the
 * report's header names it; {@code --no-fork} measures in the launching JVM instead.
 */
public final class BenchMain {
    /** The measuring JVM's settings: a fixed 4 GiB heap, so that heap sizing does not drift between rounds. */
    static final List<String> FORK_JVM_ARGS = List.of("-Xms4g", "-Xmx4g", "-XX:+UseG1GC");
    private static final String FORKED = "--forked";

    private BenchMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals(OpenStreamsClient.MODE)) {
            OpenStreamsClient.main(args);
            return;
        }
        List<String> list = new ArrayList<>(Arrays.asList(args));
        boolean forked = list.remove(FORKED);
        boolean noFork = list.remove("--no-fork");
        List<String> jvm = new ArrayList<>(FORK_JVM_ARGS);
        int jvmAt = list.indexOf("--jvm");
        if (jvmAt >= 0) {
            jvm.addAll(Arrays.asList(list.get(jvmAt + 1).trim().split("\\s+")));
            list.remove(jvmAt + 1);
            list.remove(jvmAt);
        }
        String java = Launcher.currentJava();
        int javaAt = list.indexOf("--java");
        if (javaAt >= 0) {
            if (javaAt + 1 >= list.size()) {
                throw new IllegalArgumentException("--java needs a JDK home or a java executable");
            }
            if (noFork) {
                throw new IllegalArgumentException("--java chooses the forked measuring JVM; it cannot go with --no-fork");
            }
            java = Launcher.java(list.get(javaAt + 1));
            list.remove(javaAt + 1);
            list.remove(javaAt);
        }
        if (!forked && !noFork && !list.contains("--help") && !list.contains("-h")) {
            List<String> forkArgs = new ArrayList<>(list);
            forkArgs.add(FORKED);
            Process process = new ProcessBuilder(Launcher.command(java, jvm, forkArgs)).inheritIO().start();
            Runtime.getRuntime().addShutdownHook(new Thread(process::destroy));
            System.exit(process.waitFor());
        }
        run(Options.parse(list.toArray(new String[0])));
    }

    private static void run(Options options) throws Exception {
        Machine machine = new Machine();
        Report report = new Report();
        long start = System.nanoTime();
        System.out.println("Parley benchmark suite — sections " + options.only);
        machine.printMarkdown(System.out);
        int exit = 0;
        try (Databases databases = new Databases()) {
            Env env = new Env(options, report, databases);
            Sections sections = new Sections(env);
            sections.runAll();
        } catch (Throwable e) {
            System.err.println("The suite failed:");
            e.printStackTrace();
            report.note("the suite failed: " + e);
            exit = 1;
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        report.print(System.out, machine, millis);
        if (options.out != null) {
            try (PrintStream out = new PrintStream(Files.newOutputStream(Path.of(options.out)), true, StandardCharsets.UTF_8)) {
                report.print(out, machine, millis);
            }
        }
        System.out.flush();
        System.exit(exit);
    }
}
