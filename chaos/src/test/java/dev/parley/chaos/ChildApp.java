package dev.parley.chaos;

import dev.parley.chat.testing.FreePorts;
import dev.parley.example.ExampleApplication;
import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The example host app in a JVM of its own (this test's class path), on a fixed port (picked where no
 * outgoing connection takes it meanwhile), so that it can be
 * killed with SIGKILL ({@link Process#destroyForcibly()} on Linux) and started again on the same database.
 * Each start logs to a file of its own under {@code target/}.
 */
final class ChildApp implements AutoCloseable {
    private final String name;
    private final int port;
    private final List<String> arguments;
    private Process process;
    private int starts;

    /** @param arguments Spring Boot arguments ({@code --key=value}) besides the port */
    ChildApp(String name, List<String> arguments) {
        this.name = name;
        this.port = FreePorts.outsideEphemeralRange();
        this.arguments = List.copyOf(arguments);
    }

    String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    /** Starts the app and waits until it answers; returns how long that took. */
    Duration start() {
        long began = System.nanoTime();
        starts++;
        Path log = Paths.get("target", "chaos-" + name + "-" + starts + ".log");
        try {
            Files.createDirectories(log.getParent());
            List<String> command = new ArrayList<>(List.of(
                    Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                    "-Xmx512m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                    "-cp", System.getProperty("java.class.path"),
                    ExampleApplication.class.getName(),
                    "--server.port=" + port,
                    "--spring.main.banner-mode=off",
                    // the checks compare a run's every step with its stored events: show them all
                    "--parley.engine.max-steps-per-answer=1000000"));
            command.addAll(arguments);
            process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile())
                    .directory(new File(".")).start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Rest rest = new Rest(baseUrl());
        long deadline = began + TimeUnit.SECONDS.toNanos(120);
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new AssertionError(name + " exited with " + process.exitValue() + "; see " + log);
            }
            if (rest.answers("/api/example/info")) {
                return Duration.ofNanos(System.nanoTime() - began);
            }
            Rest.sleep(100);
        }
        throw new AssertionError(name + " did not start within 120 s; see " + log);
    }

    /** SIGKILL: no shutdown hook, no last flush, no closing of connections. Waits until the process is gone. */
    void kill() {
        process.destroyForcibly();
        try {
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                throw new AssertionError(name + " did not die");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    @Override
    public void close() {
        if (process != null && process.isAlive()) {
            process.destroy();
            try {
                if (!process.waitFor(20, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
