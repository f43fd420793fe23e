package dev.parley.bridge;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * {@code python -m parley_bridge} as a child process on a free loopback port, over the stand-in Hermes in
 * {@code tests/standin} (scripted by {@code standin-scripts.json}, see {@link #overStandIn}) or over a real
 * Hermes Agent ({@link #overHermes}). Its log goes to a file; stdout must stay empty.
 */
final class BridgeProcess implements AutoCloseable {
    static final String TOKEN = "it-token-5f0c2a9e71";

    private final Path work;
    private final String python;
    private final Path hermes;
    private final Map<String, String> extraEnv;
    private Process process;
    private int port;
    private int starts;

    private BridgeProcess(Path work, String python, Path hermes, Map<String, String> extraEnv) {
        this.work = work;
        this.python = python;
        this.hermes = hermes;
        this.extraEnv = extraEnv;
    }

    /** The Bridge over the stand-in Hermes, with the system's {@code python3} (or {@code -Dpython}). */
    static BridgeProcess overStandIn(Path work, Map<String, String> extraEnv) {
        Path scripts = Path.of(System.getProperty("bridge.scripts", "src/test/resources/standin-scripts.json"));
        Map<String, String> env = new java.util.HashMap<>(extraEnv);
        env.put("HERMES_STANDIN_SCRIPTS", bridgeDir().resolve(scripts).toAbsolutePath().toString());
        env.put("HERMES_STANDIN_APPROVAL_TIMEOUT", "30");
        return new BridgeProcess(work, System.getProperty("bridge.python", "python3"),
                bridgeDir().resolve("tests/standin"), env);
    }

    /**
     * The Bridge over the Hermes Agent source in {@code hermesSource}, run by {@code python} (which has Hermes'
     * dependencies); {@code env} holds at least its {@code HERMES_HOME}.
     */
    static BridgeProcess overHermes(Path work, String python, Path hermesSource, Map<String, String> env) {
        return new BridgeProcess(work, python, hermesSource, env);
    }

    private static Path bridgeDir() {
        return Path.of(System.getProperty("bridge.dir", "."));
    }

    /** Starts (or restarts) the Bridge and waits until it listens. */
    BridgeProcess start() throws IOException, InterruptedException {
        Path dir = bridgeDir();
        Path portFile = work.resolve("port-" + ++starts);
        ProcessBuilder builder = new ProcessBuilder(python, "-m", "parley_bridge",
                "--port", "0", "--port-file", portFile.toString(), "--work-root", work.resolve("work").toString(),
                "--heartbeat", "1", "--log-level", "DEBUG", "--log-file", work.resolve("bridge.log").toString())
                .directory(dir.toFile())
                .redirectOutput(work.resolve("stdout-" + starts + ".txt").toFile())
                .redirectError(work.resolve("stderr-" + starts + ".txt").toFile());
        Map<String, String> env = builder.environment();
        env.put("PYTHONPATH", hermes + java.io.File.pathSeparator + dir);
        env.put("PYTHONDONTWRITEBYTECODE", "1");
        env.put("PARLEY_BRIDGE_TOKEN", TOKEN);
        env.putAll(extraEnv);
        process = builder.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!Files.exists(portFile) || Files.readString(portFile).isBlank()) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the Bridge exited " + process.exitValue() + ": " + log());
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the Bridge did not start within 60 s: " + log());
            }
            Thread.sleep(50);
        }
        port = Integer.parseInt(Files.readString(portFile).trim());
        return this;
    }

    int port() {
        return port;
    }

    String log() throws IOException {
        Path log = work.resolve("bridge.log");
        String text = Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
        for (int i = 1; i <= starts; i++) {
            Path err = work.resolve("stderr-" + i + ".txt");
            if (Files.exists(err)) {
                text += Files.readString(err, StandardCharsets.UTF_8);
            }
        }
        return text;
    }

    /** Everything the Bridge wrote to stdout, over all its starts. */
    List<String> stdout() throws IOException {
        StringBuilder out = new StringBuilder();
        for (int i = 1; i <= starts; i++) {
            out.append(Files.readString(work.resolve("stdout-" + i + ".txt"), StandardCharsets.UTF_8));
        }
        return out.toString().lines().toList();
    }

    /** Stops the process (SIGTERM, then kill): a restart loses every session and run it held. */
    void stop() throws InterruptedException {
        if (process != null && process.isAlive()) {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        stop();
    }
}
