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
 * {@code python3 -m parley_bridge} as a child process on a free loopback port, over the stand-in Hermes in
 * {@code tests/standin} (scripted by {@code standin-scripts.json}). Its log goes to a file; stdout must stay empty.
 */
final class BridgeProcess implements AutoCloseable {
    static final String TOKEN = "it-token-5f0c2a9e71";

    private final Path work;
    private final Map<String, String> extraEnv;
    private Process process;
    private int port;
    private int starts;

    BridgeProcess(Path work, Map<String, String> extraEnv) {
        this.work = work;
        this.extraEnv = extraEnv;
    }

    /** Starts (or restarts) the Bridge and waits until it listens. */
    BridgeProcess start() throws IOException, InterruptedException {
        Path dir = Path.of(System.getProperty("bridge.dir", "."));
        Path portFile = work.resolve("port-" + ++starts);
        Path scripts = Path.of(System.getProperty("bridge.scripts", "src/test/resources/standin-scripts.json"));
        ProcessBuilder builder = new ProcessBuilder(System.getProperty("bridge.python", "python3"), "-m", "parley_bridge",
                "--port", "0", "--port-file", portFile.toString(), "--work-root", work.resolve("work").toString(),
                "--heartbeat", "1", "--log-level", "DEBUG", "--log-file", work.resolve("bridge.log").toString())
                .directory(dir.toFile())
                .redirectOutput(work.resolve("stdout-" + starts + ".txt").toFile())
                .redirectError(work.resolve("stderr-" + starts + ".txt").toFile());
        Map<String, String> env = builder.environment();
        env.put("PYTHONPATH", dir.resolve("tests/standin") + java.io.File.pathSeparator + dir);
        env.put("PYTHONDONTWRITEBYTECODE", "1");
        env.put("HERMES_STANDIN_SCRIPTS", dir.resolve(scripts).toAbsolutePath().toString());
        env.put("HERMES_STANDIN_APPROVAL_TIMEOUT", "30");
        env.put("PARLEY_BRIDGE_TOKEN", TOKEN);
        env.putAll(extraEnv);
        process = builder.start();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!Files.exists(portFile) || Files.readString(portFile).isBlank()) {
            if (!process.isAlive()) {
                throw new IllegalStateException("the Bridge exited " + process.exitValue() + ": " + log());
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the Bridge did not start within 30 s: " + log());
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
