package dev.parley.simulator;

import static dev.parley.simulator.internal.Exchanges.clip;
import static dev.parley.simulator.internal.Exchanges.error;
import static dev.parley.simulator.internal.Exchanges.json;
import static dev.parley.simulator.internal.Exchanges.readJson;
import static dev.parley.simulator.internal.Exchanges.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.parley.chat.runtime.RunThreads;
import dev.parley.simulator.internal.Agent;
import dev.parley.simulator.internal.ApprovalMemory;
import dev.parley.simulator.internal.ControlRoutes;
import dev.parley.simulator.internal.FrameLog;
import dev.parley.simulator.internal.SimRun;
import java.io.BufferedOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A Hermes Bridge that plays scripted {@link Scenario}s instead of running an agent: it speaks the Bridge
 * protocol v1 ({@code docs/hermes-bridge-protocol.md}) exactly, over the JDK's HTTP server. For offline
 * runs of the example app, for end-to-end tests and for benchmarks (the LONG scenario writes frames as
 * fast as the socket takes them, batching writes and flushing when it catches up).
 *
 * <p>Embed it with {@link #start(SimulatorConfig)} and {@link #close()}, or run {@link #main} from a shell.
 * Every run keeps its frames so that {@code GET /runs/{id}/events?after=N} can replay them; each frame's
 * data carries {@code ts} (epoch milliseconds) and {@code tsMicros} (epoch microseconds) stamped when the
 * frame was produced, for latency measurements. Each request and each run's scripted agent has a thread of
 * its own ({@link RunThreads}: virtual on Java 21+, so that the simulator, standing in for a remote Bridge,
 * adds no platform thread per waiting run to the JVM it is embedded in). Thread-safe.
 */
public final class BridgeSimulator implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BridgeSimulator.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int BATCH = 512;
    private static final byte[] PING = ": ping\n\n".getBytes(StandardCharsets.US_ASCII);

    private final SimulatorConfig config;
    private final HttpServer server;
    private final ExecutorService http;
    private final ExecutorService agents;
    private final Map<String, SimRun> runs = new ConcurrentHashMap<>();
    private final Map<String, String> activeBySession = new HashMap<>();
    private final Map<String, Boolean> sessions = new HashMap<>();
    private final ApprovalMemory approvals = new ApprovalMemory();
    private final LinkedHashMap<String, SimRun> finished = new LinkedHashMap<>();
    private final Map<String, RunRequestSeen> requests = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> streams = new ConcurrentHashMap<>();
    private final Clock clock = Clock.systemUTC();
    private volatile boolean closed;

    /**
     * What the simulator received for a run (for tests): the session asked for, whether a model key came, and how
     * many {@code history} entries (the history addition; the simulator plays its scenario either way).
     */
    public record RunRequestSeen(String runId, String sessionId, String userMessage, String systemPrompt,
            boolean modelApiKeyPresent, List<String> hostTools, int historyEntries) {
    }

    private BridgeSimulator(SimulatorConfig config) throws IOException {
        this.config = config;
        this.http = RunThreads.executor("bridge-sim-http");
        this.agents = RunThreads.executor("bridge-sim-agent");
        this.server = HttpServer.create(new InetSocketAddress(config.host(), config.port()), 64);
        server.createContext("/", this::handle);
        server.setExecutor(http);
        server.start();
    }

    /** Starts a simulator; it listens until {@link #close()}. */
    public static BridgeSimulator start(SimulatorConfig config) throws IOException {
        return new BridgeSimulator(config);
    }

    /** The port it listens on (the chosen one when the configuration said 0). */
    public int port() {
        return server.getAddress().getPort();
    }

    /** {@code http://host:port}, the base URL for a client. */
    public String baseUrl() {
        return "http://" + config.host() + ":" + port();
    }

    public SimulatorConfig config() {
        return config;
    }

    /** What the simulator received for a run, if it did. */
    public Optional<RunRequestSeen> request(String runId) {
        return Optional.ofNullable(requests.get(runId));
    }

    /** How many event streams (the run's own, then re-attachments) the simulator opened for a run. */
    public int streamsOpened(String runId) {
        AtomicInteger count = streams.get(runId);
        return count == null ? 0 : count.get();
    }

    /** The run's status as {@code GET /runs/{id}} reports it, if the run is known. */
    public Optional<String> runStatus(String runId) {
        SimRun run = runs.get(runId);
        return run == null ? Optional.empty() : Optional.of(run.status());
    }

    /**
     * Forgets every session and the approvals given "for the session", as a restarted Bridge would (runs and
     * "always" approvals are kept).
     */
    public void forgetSessions() {
        approvals.forgetSessions();
        synchronized (sessions) {
            sessions.clear();
        }
    }

    /** Stops listening, cancels the runs still going and ends their threads. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        runs.values().forEach(SimRun::cancel);
        server.stop(0);
        agents.shutdownNow();
        http.shutdownNow();
        try {
            agents.awaitTermination(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ------------------------------------------------------------------ routing

    private void handle(HttpExchange exchange) throws IOException {
        try {
            route(exchange);
        } catch (Abrupt cut) {
            // not closing the exchange: the server then drops the connection mid-body
            throw cut;
        } catch (IOException e) {
            log.debug("A client went away: {}", e.toString());
        } catch (RuntimeException e) {
            log.error("The simulator failed on {} {}", exchange.getRequestMethod(), exchange.getRequestURI(), e);
            try {
                error(exchange, 500, "INTERNAL", "the simulator failed: " + e.getClass().getSimpleName(), true);
            } catch (IOException | RuntimeException ignored) {
                // the client is gone or the answer started already
            }
        }
        exchange.close();
    }

    private void route(HttpExchange ex) throws IOException {
        URI uri = ex.getRequestURI();
        String method = ex.getRequestMethod();
        String[] path = uri.getPath().replaceAll("^/+|/+$", "").split("/");
        if (path.length == 1 && path[0].equals("health")) {
            if (!method.equals("GET")) {
                error(ex, 405, "METHOD_NOT_ALLOWED", "use GET", false);
                return;
            }
            int active = (int) runs.values().stream().filter(r -> !r.ended()).count();
            ObjectNode body = JSON.createObjectNode().put("status", "ok").put("protocol", "hermes-bridge/1");
            body.putArray("capabilities").add("clarify").add("cancel").add("resume-stream").add("host-tools")
                    .add("approvals");
            body.put("activeRuns", active).put("simulated", true);
            json(ex, 200, body);
            return;
        }
        if (!authorized(ex)) {
            error(ex, 401, "UNAUTHORIZED", "a valid bearer token is required", false);
            return;
        }
        if (path.length == 1 && path[0].equals("run")) {
            if (expect(ex, "POST")) {
                startRun(ex);
            }
            return;
        }
        if (path.length >= 2 && path[0].equals("runs")) {
            SimRun run = runs.get(path[1]);
            if (run == null) {
                error(ex, 404, "RUN_NOT_FOUND", "no such run: " + clip(path[1]), false);
                return;
            }
            String action = path.length == 2 ? "" : path[2];
            if (path.length == 4 && path[2].equals("approval") && path[3].equals("expire")) {
                action = "approval/expire";
            } else if (path.length > 3) {
                action = "?";
            }
            switch (action) {
                case "":
                    if (expect(ex, "GET")) {
                        json(ex, 200, run.describe());
                    }
                    return;
                case "events":
                    if (expect(ex, "GET")) {
                        reattach(ex, run);
                    }
                    return;
                case "clarify":
                    if (expect(ex, "POST")) {
                        ControlRoutes.clarify(ex, run);
                    }
                    return;
                case "cancel":
                    if (expect(ex, "POST")) {
                        ControlRoutes.cancel(ex, run);
                    }
                    return;
                case "tool-result":
                    if (expect(ex, "POST")) {
                        ControlRoutes.toolResult(ex, run);
                    }
                    return;
                case "approval":
                    if (expect(ex, "POST")) {
                        ControlRoutes.approval(ex, run);
                    }
                    return;
                case "approval/expire":
                    if (expect(ex, "POST")) {
                        ControlRoutes.expireApproval(ex, run);
                    }
                    return;
                default:
                    break;
            }
        }
        error(ex, 404, "NOT_FOUND", "no such route: " + method + " " + clip(uri.getPath()), false);
    }

    private boolean authorized(HttpExchange ex) {
        String token = config.bearerToken();
        if (token == null) {
            return true;
        }
        String header = ex.getRequestHeaders().getFirst("Authorization");
        byte[] expected = ("Bearer " + token).getBytes(StandardCharsets.UTF_8);
        byte[] given = header == null ? new byte[0] : header.getBytes(StandardCharsets.UTF_8);
        return MessageDigest.isEqual(expected, given);
    }

    private static boolean expect(HttpExchange ex, String method) throws IOException {
        if (ex.getRequestMethod().equals(method)) {
            return true;
        }
        ex.getResponseHeaders().set("Allow", method);
        error(ex, 405, "METHOD_NOT_ALLOWED", "use " + method, false);
        return false;
    }

    // ------------------------------------------------------------------ POST /run

    private void startRun(HttpExchange ex) throws IOException {
        JsonNode body = readJson(ex);
        if (body == null) {
            return;
        }
        String runId = text(body, "runId");
        String message = text(body, "userMessage");
        JsonNode sessionNode = body.get("sessionId");
        JsonNode iterations = body.get("maxIterations");
        if (runId == null || runId.isBlank() || runId.length() > 200) {
            error(ex, 400, "INVALID_REQUEST", "runId must be a non-blank string of at most 200 characters", false);
            return;
        }
        if (message == null || message.isBlank()) {
            error(ex, 400, "INVALID_REQUEST", "userMessage must be a non-blank string", false);
            return;
        }
        if (sessionNode != null && !sessionNode.isNull() && (!sessionNode.isTextual() || sessionNode.asText().isBlank())) {
            error(ex, 400, "INVALID_REQUEST", "sessionId must be a non-blank string or null", false);
            return;
        }
        if (iterations != null && !iterations.isNull() && (!iterations.canConvertToInt() || iterations.asInt() < 1)) {
            error(ex, 400, "INVALID_REQUEST", "maxIterations must be a positive integer", false);
            return;
        }
        String requested = sessionNode == null || sessionNode.isNull() ? null : sessionNode.asText();
        List<String> hostTools = new ArrayList<>();
        for (JsonNode tool : body.path("hostTools")) {
            String name = text(tool, "name");
            if (name != null && !name.isBlank()) {
                hostTools.add(name);
            }
        }
        boolean takesApprovals = false;
        for (JsonNode capability : body.path("clientCapabilities")) {
            takesApprovals |= "approvals".equals(capability.asText());
        }
        String threadId = text(body, "threadId");
        Scenario scenario = config.scenario() != null ? config.scenario() : Scenario.choose(message);
        String hermesSession;
        boolean resumed;
        SimRun run;
        synchronized (sessions) {
            if (runs.containsKey(runId)) {
                error(ex, 409, "RUN_ID_CONFLICT", "a run with this id exists already", false);
                return;
            }
            if (requested != null && !sessions.containsKey(requested) && config.strictSessions()) {
                error(ex, 410, "SESSION_NOT_FOUND", "the session is not known to this Bridge (it may have restarted)", false);
                return;
            }
            if (requested != null && activeBySession.containsKey(requested)) {
                error(ex, 409, "SESSION_BUSY", "the session has an active run: " + activeBySession.get(requested), true);
                return;
            }
            resumed = requested != null && sessions.containsKey(requested);
            hermesSession = requested != null ? requested : "hs-" + UUID.randomUUID();
            sessions.put(hermesSession, Boolean.TRUE);
            activeBySession.put(hermesSession, runId);
            String approvalKey = threadId != null && !threadId.isBlank() ? "thread:" + threadId : "session:" + hermesSession;
            run = new SimRun(runId, scenario, message, hostTools, hermesSession, approvalKey, takesApprovals,
                    scenario == Scenario.DROP, clock);
            runs.put(runId, run);
        }
        requests.put(runId, new RunRequestSeen(runId, requested, message, text(body, "systemPrompt"),
                text(body.path("modelConfig"), "apiKey") != null, List.copyOf(hostTools), body.path("history").size()));
        String sessionKey = hermesSession;
        Agent agent = new Agent(run, requested, resumed, config, approvals, rotated -> {
            synchronized (sessions) {
                sessions.put(rotated, Boolean.TRUE);
                activeBySession.remove(sessionKey);
                activeBySession.put(rotated, runId);
            }
        }, this::ended);
        agents.execute(agent);
        stream(ex, run, 0, run.takeDrop());
    }

    private void ended(SimRun run) {
        synchronized (sessions) {
            activeBySession.values().removeIf(runId -> runId.equals(run.runId()));
            finished.put(run.runId(), run);
            long frames = 0;
            for (SimRun kept : finished.values()) {
                frames += kept.frames().frameCount();
            }
            Iterator<SimRun> oldest = finished.values().iterator();
            while (oldest.hasNext() && (finished.size() > config.retainedRuns() || frames > config.retainedFrames())) {
                SimRun evicted = oldest.next();
                frames -= evicted.frames().frameCount();
                oldest.remove();
                runs.remove(evicted.runId());
                requests.remove(evicted.runId());
                streams.remove(evicted.runId());
            }
        }
    }

    // ------------------------------------------------------------------ streams

    private void reattach(HttpExchange ex, SimRun run) throws IOException {
        long after = 0;
        String last = ex.getRequestHeaders().getFirst("Last-Event-ID");
        String query = ex.getRequestURI().getRawQuery();
        String given = last;
        if (query != null) {
            for (String pair : query.split("&")) {
                if (pair.startsWith("after=")) {
                    given = pair.substring("after=".length());
                }
            }
        }
        if (given != null) {
            try {
                after = Long.parseLong(given.trim());
            } catch (NumberFormatException e) {
                after = -1;
            }
            if (after < 0) {
                error(ex, 400, "INVALID_REQUEST", "after must be a non-negative integer", false);
                return;
            }
        }
        stream(ex, run, after, false);
    }

    /**
     * Writes the run's frames after {@code after}, then live ones, with heartbeats, until {@code done}.
     * Writes go through a buffer and are flushed whenever the writer has caught up with the run.
     */
    private void stream(HttpExchange ex, SimRun run, long after, boolean cut) throws IOException {
        ex.getResponseHeaders().set("Content-Type", "text/event-stream; charset=utf-8");
        ex.getResponseHeaders().set("Cache-Control", "no-cache");
        ex.getResponseHeaders().set("X-Accel-Buffering", "no");
        ex.sendResponseHeaders(200, 0);
        streams.computeIfAbsent(run.runId(), id -> new AtomicInteger()).incrementAndGet();
        OutputStream out = new BufferedOutputStream(ex.getResponseBody(), 64 * 1024);
        long heartbeat = config.heartbeatInterval().toNanos();
        long next = after;
        int cutAt = config.dropAfterFrames();
        try {
            while (!closed) {
                FrameLog.Batch batch = run.frames().next(next, BATCH, heartbeat);
                if (batch.heartbeat()) {
                    out.write(PING);
                    out.flush();
                    continue;
                }
                for (byte[] frame : batch.frames()) {
                    out.write(frame);
                    next++;
                    if (cut && next >= cutAt) {
                        out.flush();
                        throw new Abrupt();
                    }
                }
                if (batch.last()) {
                    out.flush();
                    return;
                }
                if (next >= run.frames().lastSeq()) {
                    out.flush();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Thrown out of a handler to cut the connection without ending the chunked body (a dropped stream). */
    private static final class Abrupt extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Abrupt() {
            super("connection cut on purpose (DROP scenario)", null, false, false);
        }
    }

    // ------------------------------------------------------------------ command line

    /**
     * Runs a simulator until the process is stopped; the options are {@link SimulatorConfig#fromCommandLine}'s
     * ({@code --help} prints them).
     */
    public static void main(String[] args) throws Exception {
        if (List.of(args).contains("--help")) {
            System.out.println(SimulatorConfig.USAGE);
            return;
        }
        SimulatorConfig config = SimulatorConfig.fromCommandLine(args);
        BridgeSimulator simulator = start(config);
        CountDownLatch stop = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            simulator.close();
            stop.countDown();
        }, "bridge-sim-shutdown"));
        System.out.println("Hermes Bridge simulator listening on " + simulator.baseUrl() + " (" + config + ")");
        stop.await();
    }
}
