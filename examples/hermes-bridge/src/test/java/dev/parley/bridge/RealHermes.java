package dev.parley.bridge;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.hermes.HermesTransport;
import dev.parley.chat.testing.FreePorts;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * A real Hermes Agent for tests, started once for every test class that uses {@link RealHermesExtension}: the
 * {@link ScriptedModel} on loopback, the reference Bridge over Hermes (its own {@code HERMES_HOME}) and Hermes'
 * own API server ({@code hermes gateway run}, another {@code HERMES_HOME}), both configured to use that model.
 *
 * <p>Where it comes from: {@value #SOURCE} names the directory holding Hermes Agent's source
 * ({@code run_agent.py}), {@value #PYTHON} a Python that has Hermes' dependencies. Everything runs in this
 * machine's network namespace, which must be loopback-only (no interface but {@code lo} up): Hermes reaches for
 * the network in places (downloads, lazy installs), and a test must not depend on, or talk to, the outside.
 * Closed (both processes stopped) when the test run ends.
 */
final class RealHermes implements AutoCloseable {
    static final String SOURCE = "PARLEY_HERMES_SRC";
    static final String PYTHON = "PARLEY_HERMES_PYTHON";
    static final String REQUIRED = "PARLEY_REQUIRE_REAL_HERMES";

    /** Hermes' {@code approvals.timeout}, also the Bridge's approval timeout and the adapter's. */
    static final Duration APPROVAL_TIMEOUT = Duration.ofSeconds(60);

    private final Path work;
    private final ScriptedModel model;
    private final BridgeProcess bridge;
    private final Process apiServer;
    private final int apiServerPort;
    private final String apiServerKey;

    private RealHermes(Path work, ScriptedModel model, BridgeProcess bridge, Process apiServer, int apiServerPort,
            String apiServerKey) {
        this.work = work;
        this.model = model;
        this.bridge = bridge;
        this.apiServer = apiServer;
        this.apiServerPort = apiServerPort;
        this.apiServerKey = apiServerKey;
    }

    /** Why a real Hermes cannot run here, or null when it can. */
    static @Nullable String unavailableBecause() {
        String source = System.getenv(SOURCE);
        String python = System.getenv(PYTHON);
        if (source == null || source.isBlank() || python == null || python.isBlank()) {
            return SOURCE + " (Hermes Agent's source) and " + PYTHON + " (a Python with its dependencies) are not set";
        }
        if (!Files.isRegularFile(Path.of(source, "run_agent.py"))) {
            return SOURCE + "=" + source + " holds no run_agent.py";
        }
        if (!Files.isExecutable(Path.of(python))) {
            return PYTHON + "=" + python + " is not an executable";
        }
        List<String> outside = interfacesOtherThanLoopback();
        if (!outside.isEmpty()) {
            return "this network namespace is not loopback-only (up: " + String.join(", ", outside)
                    + "); run the tests under `ip netns exec` in a namespace where only lo is up";
        }
        return null;
    }

    /** Whether a missing real Hermes fails the tests instead of skipping them ({@value #REQUIRED}=true, as in CI). */
    static boolean required() {
        return "true".equalsIgnoreCase(System.getenv(REQUIRED));
    }

    private static List<String> interfacesOtherThanLoopback() {
        try {
            return NetworkInterface.networkInterfaces().filter(RealHermes::upAndNotLoopback).map(NetworkInterface::getName)
                    .sorted().toList();
        } catch (SocketException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static boolean upAndNotLoopback(NetworkInterface network) {
        try {
            return network.isUp() && !network.isLoopback();
        } catch (SocketException e) {
            return true;
        }
    }

    /** Starts the model, then the Bridge and the API server side by side, and waits until both answer. */
    static RealHermes start() throws Exception {
        long began = System.nanoTime();
        Path source = Path.of(System.getenv(SOURCE)).toAbsolutePath();
        String python = System.getenv(PYTHON);
        Path work = Files.createDirectories(Path.of(System.getProperty("real.hermes.work", "target/real-hermes"))
                .toAbsolutePath().resolve("run-" + System.currentTimeMillis()));
        ScriptedModel model = new ScriptedModel();
        BridgeProcess bridge = null;
        Process apiServer = null;
        try {
            Path bridgeWork = Files.createDirectories(work.resolve("bridge"));
            Path bridgeHome = hermesHome(work.resolve("bridge-home"), model);
            bridge = BridgeProcess.overHermes(bridgeWork, python, source, Map.of("HERMES_HOME", bridgeHome.toString()));

            Path serverHome = hermesHome(work.resolve("api-server-home"), model);
            int port = FreePorts.outsideEphemeralRange();
            byte[] secret = new byte[16];
            new SecureRandom().nextBytes(secret);
            String key = "parley-it-" + HexFormat.of().formatHex(secret);
            Path serverLog = work.resolve("api-server.log");
            ProcessBuilder builder = new ProcessBuilder(python, "-m", "hermes_cli.main", "gateway", "run", "--replace", "-v")
                    .directory(serverHome.toFile()).redirectErrorStream(true).redirectOutput(serverLog.toFile());
            Map<String, String> env = builder.environment();
            env.put("HERMES_HOME", serverHome.toString());
            env.put("PYTHONPATH", source.toString());
            env.put("PYTHONDONTWRITEBYTECODE", "1");
            env.put("API_SERVER_ENABLED", "true");
            env.put("API_SERVER_KEY", key);
            env.put("API_SERVER_HOST", "127.0.0.1");
            env.put("API_SERVER_PORT", Integer.toString(port));
            apiServer = builder.start();
            bridge.start();
            String version = awaitHealth(apiServer, port, serverLog);
            System.out.printf("Real Hermes tests: Hermes Agent %s from %s, the Bridge and the API server up in %.1f s;"
                    + " logs in %s%n", version, source, (System.nanoTime() - began) / 1e9, work);
            return new RealHermes(work, model, bridge, apiServer, port, key);
        } catch (Exception | Error e) {
            if (bridge != null) {
                bridge.stop();
            }
            if (apiServer != null) {
                stop(apiServer);
            }
            model.close();
            throw e;
        }
    }

    /**
     * A {@code HERMES_HOME} whose {@code config.yaml} points Hermes at the model, as a vision model (Hermes cannot look
     * a scripted model up, and would replace each image with a description), and keeps it off the network.
     */
    private static Path hermesHome(Path home, ScriptedModel model) throws IOException {
        Files.createDirectories(home);
        Files.writeString(home.resolve("config.yaml"), String.join("\n",
                "model: {default: " + ScriptedModel.MODEL + ", provider: custom, base_url: \"" + model.baseUrl()
                        + "\", api_key: fake-key, context_length: 128000, supports_vision: true}",
                "approvals: {mode: manual, timeout: " + APPROVAL_TIMEOUT.toSeconds() + "}",
                "terminal: {backend: local}",
                "compression: {enabled: false}",
                "memory: {memory_enabled: false, user_profile_enabled: false}",
                // without these two Hermes pip-installs packages and downloads its tirith binary
                "security: {allow_lazy_installs: false, tirith_enabled: false}",
                ""), StandardCharsets.UTF_8);
        return home;
    }

    /** Waits until the API server answers {@code GET /health}; the version it says. */
    private static String awaitHealth(Process server, int port, Path log) throws Exception {
        HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
        HttpRequest health = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/health"))
                .timeout(Duration.ofSeconds(2)).build();
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (true) {
            if (!server.isAlive()) {
                throw new IllegalStateException("Hermes' API server exited " + server.exitValue() + ": " + tail(log));
            }
            try {
                HttpResponse<String> answer = client.send(health, HttpResponse.BodyHandlers.ofString());
                if (answer.statusCode() == 200) {
                    return new ObjectMapper().readTree(answer.body()).path("version").asText("(version unknown)");
                }
            } catch (IOException notYet) {
                // not listening yet
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("Hermes' API server did not answer /health within 90 s: " + tail(log));
            }
            Thread.sleep(200);
        }
    }

    ScriptedModel model() {
        return model;
    }

    BridgeProcess bridge() {
        return bridge;
    }

    /** Where the Bridge keeps each conversation's working directory ({@code --work-root}). */
    Path bridgeWorkRoot() {
        return work.resolve("bridge").resolve("work");
    }

    /** A new directory below this run's work directory. */
    Path directory(String name) throws IOException {
        return Files.createDirectories(work.resolve("dirs").resolve(name + "-" + System.nanoTime()));
    }

    /** An adapter for the Bridge; the caller closes it. */
    HermesRuntimeAdapter bridgeAdapter() {
        return new HermesRuntimeAdapter(HermesConfig.builder().baseUrl("http://127.0.0.1:" + bridge.port())
                .bearerToken(BridgeProcess.TOKEN).idleTimeout(Duration.ofSeconds(20)).build());
    }

    /** An adapter for the API server; the caller closes it. */
    HermesRuntimeAdapter apiServerAdapter() {
        return new HermesRuntimeAdapter(HermesConfig.builder().transport(HermesTransport.API_SERVER)
                .baseUrl("http://127.0.0.1:" + apiServerPort).bearerToken(apiServerKey)
                .apiServerApprovalTimeout(APPROVAL_TIMEOUT).idleTimeout(Duration.ofSeconds(45)).build());
    }

    /** The API server's bearer token, a secret. */
    String apiServerKey() {
        return apiServerKey;
    }

    @Override
    public void close() throws Exception {
        try {
            bridge.stop();
            stop(apiServer);
        } finally {
            model.close();
        }
    }

    private static void stop(Process process) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(15, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.exists(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
            return lines.subList(Math.max(0, lines.size() - 60), lines.size()).stream()
                    .collect(Collectors.joining("\n", "\n", ""));
        } catch (IOException e) {
            return "(its log is unreadable: " + e + ")";
        }
    }
}
