package dev.parley.simulator;

import static dev.parley.simulator.internal.Exchanges.clip;
import static dev.parley.simulator.internal.Exchanges.error;
import static dev.parley.simulator.internal.Exchanges.json;
import static dev.parley.simulator.internal.Exchanges.parseJson;
import static dev.parley.simulator.internal.Exchanges.refuse;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import dev.parley.chat.runtime.RunThreads;
import dev.parley.simulator.internal.Admission;
import dev.parley.simulator.internal.Agent;
import dev.parley.simulator.internal.ApprovalMemory;
import dev.parley.simulator.internal.Attachments;
import dev.parley.simulator.internal.ControlRoutes;
import dev.parley.simulator.internal.Exchanges;
import dev.parley.simulator.internal.Routes;
import dev.parley.simulator.internal.SimRun;
import dev.parley.simulator.internal.StartRequest;
import dev.parley.simulator.internal.StreamWriter;
import java.io.IOException;
import java.net.InetSocketAddress;
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
 *
 * <p>Like every Bridge it refuses web pages' requests ({@link Admission}), reads a body only after the
 * request's token was checked, and makes up unguessable ids for the inputs it asks.
 */
public final class BridgeSimulator implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(BridgeSimulator.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    /** How long {@code DELETE /threads/{id}} waits at most for the thread's cancelled runs to end. */
    private static final long FORGET_WAIT_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final SimulatorConfig config;
    private final HttpServer server;
    private final ExecutorService http;
    private final ExecutorService agents;
    private final StreamWriter streamWriter;
    private final ApprovalMemory approvals = new ApprovalMemory();
    private final Map<String, SimRun> runs = new ConcurrentHashMap<>();
    private final Map<String, RunRequestSeen> requests = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> streams = new ConcurrentHashMap<>();
    private final Clock clock = Clock.systemUTC();
    private volatile boolean closed;

    // guarded by the lock "sessions"
    /** The Hermes sessions the simulator holds, each with the thread whose run last used it (null: none). */
    private final Map<String, String> sessions = new HashMap<>();
    private final Map<String, String> activeBySession = new HashMap<>();
    private final LinkedHashMap<String, SimRun> finished = new LinkedHashMap<>();
    /** Threads being forgotten right now, with how many deletes of each are under way. */
    private final Map<String, Integer> forgetting = new HashMap<>();
    /** Runs of forgotten threads that had not ended yet: their thread stays busy, and is erased again at their end. */
    private final Map<String, SimRun> forgottenActive = new HashMap<>();

    /**
     * What the simulator received for a run (for tests): the thread and session asked for, whether a model key
     * came, how many {@code history} entries (the history addition; the simulator plays its scenario either
     * way) and the question's files (the attachments addition). Forgotten with the run's thread
     * ({@code DELETE /threads/{threadId}}).
     */
    public record RunRequestSeen(String runId, String threadId, String sessionId, String userMessage,
            String systemPrompt, boolean modelApiKeyPresent, List<String> hostTools, int historyEntries,
            List<ReceivedFile> attachments) {
    }

    private BridgeSimulator(SimulatorConfig config) throws IOException {
        this.config = config;
        this.http = RunThreads.executor("bridge-sim-http");
        this.agents = RunThreads.executor("bridge-sim-agent");
        this.streamWriter = new StreamWriter(config.heartbeatInterval(), config.dropAfterFrames(), () -> closed);
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
        String host = config.host();
        return "http://" + (host.contains(":") && !host.startsWith("[") ? "[" + host + "]" : host) + ":" + port();
    }

    public SimulatorConfig config() {
        return config;
    }

    /** What the simulator received for a run, if it did (and has not forgotten the run). */
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
        synchronized (sessions) {
            forgottenActive.values().forEach(SimRun::cancel);
        }
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
        } catch (Exchanges.ConnectionCut cut) {
            // not closing the exchange: the server then drops the connection, leaving the request body unread
            // or the response body unfinished
            throw cut;
        } catch (IOException e) {
            log.debug("A client went away: {}", e.toString());
        } catch (RuntimeException e) {
            log.error("The simulator failed on {} {}", exchange.getRequestMethod(), clip(exchange.getRequestURI().getPath()),
                    e);
            try {
                error(exchange, 500, "INTERNAL", "the simulator failed: " + e.getClass().getSimpleName(), true);
            } catch (IOException | RuntimeException ignored) {
                // the client is gone or the answer started already
            }
        }
        exchange.close();
    }

    /** Headers first (admission, route, method, token), the body only then, as the protocol's section 1 says. */
    private void route(HttpExchange ex) throws IOException {
        String method = ex.getRequestMethod();
        Admission.Refusal refusal = Admission.check(ex.getRequestHeaders(), method, config.bearerToken() != null);
        if (refusal != null) {
            log.warn("Refused {} {}: {}", method, clip(ex.getRequestURI().getRawPath()), refusal.code());
            refuse(ex, refusal.status(), refusal.code(), refusal.message());
            return;
        }
        Routes.Route route = Routes.match(ex.getRequestURI().getRawPath());
        if (route == null) {
            refuse(ex, 404, "NOT_FOUND", "no such route: " + method + " " + clip(ex.getRequestURI().getRawPath()));
            return;
        }
        if (!method.equals(route.name().method())) {
            ex.getResponseHeaders().set("Allow", route.name().method());
            refuse(ex, 405, "METHOD_NOT_ALLOWED", "use " + route.name().method());
            return;
        }
        if (route.name() != Routes.Name.HEALTH && !Admission.authorized(ex.getRequestHeaders(), config.bearerToken())) {
            log.warn("Refused {} {}: UNAUTHORIZED", method, clip(ex.getRequestURI().getRawPath()));
            refuse(ex, 401, "UNAUTHORIZED", "a valid bearer token is required");
            return;
        }
        byte[] body = Exchanges.readBody(ex, route.name() == Routes.Name.RUN
                ? Exchanges.MAX_BODY + Attachments.DEFAULTS.bodyAllowance() : Exchanges.MAX_BODY);
        switch (route.name()) {
            case HEALTH:
                health(ex);
                return;
            case RUN:
                startRun(ex, body);
                return;
            case FORGET_THREAD:
                forgetThread(ex, route.id());
                return;
            default:
                break;
        }
        SimRun run = runs.get(route.id());
        if (run == null) {
            error(ex, 404, "RUN_NOT_FOUND", "no such run: " + clip(route.id()), false);
            return;
        }
        switch (route.name()) {
            case STATUS:
                json(ex, 200, run.describe());
                break;
            case EVENTS:
                reattach(ex, run);
                break;
            case CLARIFY:
                ControlRoutes.clarify(ex, run, body);
                break;
            case CANCEL:
                ControlRoutes.cancel(ex, run);
                break;
            case TOOL_RESULT:
                ControlRoutes.toolResult(ex, run, body);
                break;
            case APPROVAL:
                ControlRoutes.approval(ex, run, body);
                break;
            case EXPIRE:
                ControlRoutes.expireApproval(ex, run, body);
                break;
            default:
                throw new IllegalStateException("unrouted " + route.name());
        }
    }

    private void health(HttpExchange ex) throws IOException {
        int active = (int) runs.values().stream().filter(r -> !r.ended()).count();
        synchronized (sessions) {
            active += forgottenActive.size();
        }
        ObjectNode body = JSON.createObjectNode().put("status", "ok").put("protocol", "hermes-bridge/1");
        body.putArray("capabilities").add("clarify").add("cancel").add("resume-stream").add("host-tools")
                .add("approvals").add("forget-thread").add("attachments");
        body.put("activeRuns", active).put("simulated", true);
        Attachments.DEFAULTS.describe(body);
        json(ex, 200, body);
    }

    // ------------------------------------------------------------------ POST /run

    private void startRun(HttpExchange ex, byte[] request) throws IOException {
        JsonNode body = parseJson(ex, request);
        if (body == null) {
            return;
        }
        StartRequest start;
        try {
            start = StartRequest.parse(body, Attachments.DEFAULTS);
        } catch (StartRequest.Invalid invalid) {
            error(ex, invalid.status(), invalid.code(), invalid.getMessage(), false);
            return;
        }
        String runId = start.runId();
        String requested = start.sessionId();
        String threadId = start.threadId();
        Scenario scenario = config.scenario() != null ? config.scenario() : Scenario.choose(start.userMessage());
        String hermesSession;
        boolean resumed;
        SimRun run;
        synchronized (sessions) {
            if (runs.containsKey(runId) || forgottenActive.containsKey(runId)) {
                error(ex, 409, "RUN_ID_CONFLICT", "a run with this id exists already", false);
                return;
            }
            if (threadId != null && (forgetting.containsKey(threadId)
                    || forgottenActive.values().stream().anyMatch(r -> threadId.equals(r.threadId())))) {
                error(ex, 409, "SESSION_BUSY", "this conversation is being deleted", true);
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
            sessions.put(hermesSession, threadId);
            activeBySession.put(hermesSession, runId);
            String approvalKey = threadId != null ? "thread:" + threadId : "session:" + hermesSession;
            run = new SimRun(runId, threadId, scenario, start.userMessage(), start.hostTools(), start.attachments(),
                    hermesSession, approvalKey, start.takesApprovals(), scenario == Scenario.DROP, clock);
            runs.put(runId, run);
            requests.put(runId, new RunRequestSeen(runId, threadId, requested, start.userMessage(), start.systemPrompt(),
                    start.modelApiKeyPresent(), start.hostTools(), start.historyEntries(), start.attachments()));
            streams.put(runId, new AtomicInteger());
        }
        String sessionKey = hermesSession;
        Agent agent = new Agent(run, requested, resumed, config, approvals, rotated -> {
            synchronized (sessions) {
                sessions.put(rotated, threadId);
                activeBySession.remove(sessionKey);
                activeBySession.put(rotated, runId);
            }
        }, this::ended);
        agents.execute(agent);
        stream(ex, run, 0, run.takeDrop());
    }

    /** The run's agent is done: frees its session and keeps the run for re-attaching, within bounds. */
    private void ended(SimRun run) {
        String threadOfForgotten = null;
        synchronized (sessions) {
            activeBySession.values().removeIf(runId -> runId.equals(run.runId()));
            if (forgottenActive.remove(run.runId()) != null) {
                // its thread was deleted while it ran: it is not kept, and what it may have added since is erased
                threadOfForgotten = run.threadId();
            } else {
                finished.put(run.runId(), run);
                evictFinished();
            }
            if (threadOfForgotten != null) {
                erase(threadOfForgotten);
            }
        }
        run.over();
    }

    /** Drops the oldest finished runs beyond {@code retainedRuns} / {@code retainedFrames}. Holds the lock. */
    private void evictFinished() {
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

    // ------------------------------------------------------------------ DELETE /threads/{threadId}

    /**
     * Forgets a conversation (protocol section 12): cancels its active runs and waits (at most 10 s) for them to
     * end, drops its runs (their frames, what they asked), its sessions and its "session" approvals. While it
     * does, a run of the thread cannot start ({@code 409 SESSION_BUSY}); a run that does not end in time keeps
     * the thread busy until it ends and is erased again then. {@code 204} also for a thread it does not know.
     */
    private void forgetThread(HttpExchange ex, String threadId) throws IOException {
        if (threadId.isBlank()) {
            error(ex, 400, "INVALID_REQUEST", "threadId must be a non-blank string", false);
            return;
        }
        List<SimRun> active = new ArrayList<>();
        synchronized (sessions) {
            forgetting.merge(threadId, 1, Integer::sum);
            for (Iterator<SimRun> it = runs.values().iterator(); it.hasNext();) {
                SimRun run = it.next();
                if (!threadId.equals(run.threadId())) {
                    continue;
                }
                it.remove();
                requests.remove(run.runId());
                streams.remove(run.runId());
                if (finished.remove(run.runId()) == null) {
                    active.add(run);
                    forgottenActive.put(run.runId(), run);
                }
            }
        }
        try {
            active.forEach(SimRun::cancel);
            long deadline = System.nanoTime() + FORGET_WAIT_NANOS;
            for (SimRun run : active) {
                if (!run.awaitOver(Math.max(0, deadline - System.nanoTime()))) {
                    log.warn("Run {} of a deleted thread did not stop in time; its thread stays busy until it does",
                            run.runId());
                }
            }
            synchronized (sessions) {
                erase(threadId);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            error(ex, 500, "INTERNAL", "the simulator was interrupted while it forgot the thread", true);
            return;
        } finally {
            synchronized (sessions) {
                forgetting.computeIfPresent(threadId, (id, n) -> n == 1 ? null : n - 1);
            }
        }
        log.info("Thread {} forgotten ({} active runs cancelled)", clip(threadId), active.size());
        ex.sendResponseHeaders(204, -1);
    }

    /** Drops the thread's sessions and the "session" approvals given in it. Holds the lock. */
    private void erase(String threadId) {
        for (Iterator<Map.Entry<String, String>> it = sessions.entrySet().iterator(); it.hasNext();) {
            Map.Entry<String, String> session = it.next();
            if (threadId.equals(session.getValue())) {
                approvals.forget("session:" + session.getKey());
                it.remove();
            }
        }
        approvals.forget("thread:" + threadId);
    }

    // ------------------------------------------------------------------ streams

    private void reattach(HttpExchange ex, SimRun run) throws IOException {
        long after = StreamWriter.after(ex);
        if (after < 0) {
            error(ex, 400, "INVALID_REQUEST", "after must be a non-negative integer", false);
            return;
        }
        stream(ex, run, after, false);
    }

    private void stream(HttpExchange ex, SimRun run, long after, boolean cut) throws IOException {
        AtomicInteger opened = streams.get(run.runId());
        if (opened != null) {
            opened.incrementAndGet();
        }
        streamWriter.write(ex, run, after, cut);
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
