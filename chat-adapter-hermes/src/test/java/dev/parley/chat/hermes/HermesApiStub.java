package dev.parley.chat.hermes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * Hermes Agent's API server as each release line behaves (docs/hermes-bridge-protocol.md, Part 2), over
 * real loopback HTTP ({@link RawServer}). It plays a fixture stream ({@code api-server/<line>/<name>}) for
 * each run and behaves as the server does around it:
 * <ul>
 *   <li>every route but {@code /health} needs the bearer token ({@code 401 invalid_api_key}); unknown routes
 *       are {@code 404}; {@code conversation_history} entries need string {@code role} and {@code content}
 *       ({@code 400}); {@code input} is text or an array of items whose last one's content may be parts: text
 *       and images ({@code data:image/…} URLs) only, a {@code file} part or another data URL is
 *       {@code 400 unsupported_content_type};</li>
 *   <li>one events subscriber per run: a second {@code GET …/events} is {@code 404}, and there is no replay;</li>
 *   <li>an {@code approval.request} waits for {@code POST …/approval} (which resolves the oldest pending one,
 *       or the one named by {@code request_id}, and writes {@code approval.responded}) or for the approval
 *       timeout, after which Hermes goes on without an event; {@code 409 approval_not_pending} when none waits;</li>
 *   <li>0.19: {@code session_id} loads nothing, {@code Idempotency-Key} is ignored, stop after the end is
 *       {@code 404}, no clarify route. 0.19.17 as 0.19, and its approval requests carry {@code approval_id} (also
 *       as {@code interaction_id}) and {@code expires_at} while a decision still goes to the oldest; its capabilities
 *       add {@code interactive_clarify} ({@link #interactiveClarify}, off by default: then there is no clarify
 *       route), {@code run_steer} and {@code approval_pending_list}. Newer: {@code session_id} restores the session's turns, the key is
 *       honoured, stop after the end answers the status, clarify questions wait for
 *       {@code POST …/clarify} and their prompt and notice are written as text too.</li>
 * </ul>
 */
public final class HermesApiStub implements AutoCloseable {
    /** The bearer token every route but {@code /health} requires. */
    public static final String KEY = "api-key-0123456789abcdef";
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String END = "\u0000end";
    private static final String RESET = "\u0000reset";
    /** Hermes' {@code MAX_REQUEST_BYTES}: a larger body is {@code 413}. */
    static final int MAX_REQUEST_BYTES = 10_000_000;

    /** The API server's line: what it sends and accepts. */
    public enum Line {
        V0_19("v0.19", "0.19.0"), V0_19_17("v0.19.17", "0.19.17"), NEWER("newer", "0.21.2");

        final String dir;
        final String version;

        Line(String dir, String version) {
            this.dir = dir;
            this.version = version;
        }
    }

    private final Line line;
    private final RawServer server;
    private final Map<String, StubRun> runs = new ConcurrentHashMap<>();
    private final List<StubRun> order = new CopyOnWriteArrayList<>();
    private final Map<String, List<JsonNode>> sessions = new ConcurrentHashMap<>();
    private final Map<String, String> idempotency = new ConcurrentHashMap<>();
    private final List<String> decisions = new CopyOnWriteArrayList<>();
    private final AtomicInteger dropStartAnswers = new AtomicInteger();
    private final AtomicInteger counter = new AtomicInteger();
    volatile Duration approvalTimeout = Duration.ofSeconds(10);
    volatile Function<JsonNode, String> script = body -> "plain.sse";
    volatile CountDownLatch holdTerminal;
    /** How long the agent takes after each event it sends (a stop cuts it short): a run that streams a while. */
    volatile Duration eventPause = Duration.ZERO;
    /** 0.19.17: its {@code interactive_clarify} setting (clarify questions asked and answered when on). */
    volatile boolean interactiveClarify;

    /** Starts the stand-in on a free loopback port. */
    public HermesApiStub(Line line) throws IOException {
        this(line, 0);
    }

    HermesApiStub(Line line, int port) throws IOException {
        this.line = line;
        this.server = new RawServer(port, this::handle);
    }

    public String baseUrl() {
        return server.baseUrl();
    }

    /** Request lines, in order. */
    public List<String> requests() {
        return server.requests();
    }

    /** Request bodies, in the order of {@link #requests()}. */
    public List<String> bodies() {
        return server.bodies();
    }

    long count(String requestLinePrefix) {
        return server.requests().stream().filter(r -> r.startsWith(requestLinePrefix)).count();
    }

    List<StubRun> runs() {
        return order;
    }

    /** The choices {@code POST …/approval} resolved, in order. */
    public List<String> decisions() {
        return decisions;
    }

    /** Picks each run's fixture ({@code api-server/<line>/<name>}) from its start request's body. */
    public void scriptBy(Function<JsonNode, String> fixtureForBody) {
        this.script = fixtureForBody;
    }

    /** The next {@code n} starts are taken (the run starts) but their answer is lost (the connection resets). */
    void loseStartAnswers(int n) {
        dropStartAnswers.set(n);
    }

    @Override
    public void close() throws IOException {
        server.close();
    }

    // ------------------------------------------------------------------ routes

    private void handle(RawServer.Exchange ex) throws Exception {
        String path = ex.path();
        String method = ex.line().substring(0, ex.line().indexOf(' '));
        if (method.equals("GET") && (path.equals("/health") || path.equals("/v1/health"))) {
            ex.json(200, "{\"status\": \"ok\", \"platform\": \"hermes-agent\", \"version\": \"" + line.version + "\"}");
            return;
        }
        if (!("Bearer " + KEY).equals(ex.header("Authorization"))) {
            error(ex, 401, "Invalid API key", "invalid_api_key");
            return;
        }
        String[] parts = path.split("/");
        if (method.equals("GET") && path.equals("/v1/capabilities")) {
            ex.json(200, capabilities());
        } else if (method.equals("GET") && path.equals("/v1/models")) {
            ex.json(200, "{\"object\": \"list\", \"data\": [{\"id\": \"hermes-agent\", \"object\": \"model\", \"owned_by\": \"hermes\"}]}");
        } else if (method.equals("POST") && path.equals("/v1/runs")) {
            startRun(ex);
        } else if (parts.length >= 4 && path.startsWith("/v1/runs/")) {
            StubRun run = runs.get(parts[3]);
            String action = parts.length > 4 ? parts[4] : "";
            if (run == null || parts.length > 5) {
                error(ex, 404, "Run not found: " + parts[3], "run_not_found");
            } else if (method.equals("GET") && action.isEmpty()) {
                ex.json(200, run.statusJson());
            } else if (method.equals("GET") && action.equals("events")) {
                events(ex, run);
            } else if (method.equals("POST") && action.equals("approval")) {
                approve(ex, run);
            } else if (method.equals("POST") && action.equals("stop")) {
                stop(ex, run);
            } else if (method.equals("POST") && action.equals("clarify")
                    && (line == Line.NEWER || line == Line.V0_19_17 && interactiveClarify)) {
                clarify(ex, run);
            } else {
                ex.answer(404, "text/plain", "404: Not Found");
            }
        } else {
            ex.answer(404, "text/plain", "404: Not Found");
        }
    }

    private String capabilities() {
        ObjectNode caps = JSON.createObjectNode().put("object", "hermes.api_server.capabilities")
                .put("platform", "hermes-agent").put("model", "hermes-agent");
        caps.putObject("auth").put("type", "bearer").put("required", true);
        ObjectNode features = caps.putObject("features");
        for (String flag : List.of("chat_completions", "responses_api", "run_submission", "run_status", "run_events_sse",
                "run_stop", "run_approval_response", "tool_progress_events", "approval_events", "session_resources",
                "session_chat", "session_chat_streaming", "session_fork", "skills_api")) {
            features.put(flag, true);
        }
        if (line == Line.NEWER) {
            features.put("managed_run_sessions", true).put("managed_run_history_authority", "hermes_session_db");
        }
        if (line == Line.V0_19_17) {
            features.put("interactive_clarify", interactiveClarify).put("run_steer", true)
                    .put("approval_pending_list", true);
        }
        features.put("session_continuity_header", "X-Hermes-Session-Id");
        ObjectNode endpoints = caps.putObject("endpoints");
        endpoints.putObject("health").put("method", "GET").put("path", "/health");
        endpoints.putObject("models").put("method", "GET").put("path", "/v1/models");
        endpoints.putObject("runs").put("method", "POST").put("path", "/v1/runs");
        endpoints.putObject("run_status").put("method", "GET").put("path", "/v1/runs/{run_id}");
        endpoints.putObject("run_events").put("method", "GET").put("path", "/v1/runs/{run_id}/events");
        endpoints.putObject("run_approval").put("method", "POST").put("path", "/v1/runs/{run_id}/approval");
        endpoints.putObject("run_stop").put("method", "POST").put("path", "/v1/runs/{run_id}/stop");
        if (line == Line.NEWER || line == Line.V0_19_17 && interactiveClarify) {
            endpoints.putObject("run_clarify").put("method", "POST").put("path", "/v1/runs/{run_id}/clarify");
        }
        return caps.toString();
    }

    private void startRun(RawServer.Exchange ex) throws Exception {
        if (ex.body().length() > MAX_REQUEST_BYTES) {
            ex.answer(413, "text/plain", "413: Request Entity Too Large");
            return;
        }
        JsonNode body;
        try {
            body = JSON.readTree(ex.body());
        } catch (IOException e) {
            body = null;
        }
        if (body == null || !body.isObject()) {
            error(ex, 400, "Invalid JSON", null);
            return;
        }
        JsonNode input = body.path("input");
        if (!(input.isTextual() && !input.asText().isEmpty()) && !(input.isArray() && !input.isEmpty())) {
            error(ex, 400, "Missing 'input' field", null);
            return;
        }
        String refused = input.isArray() ? refusedContent(input.get(input.size() - 1).path("content")) : null;
        if (refused != null) {
            int colon = refused.indexOf(':');
            error(ex, 400, refused.substring(colon + 1), refused.substring(0, colon));
            return;
        }
        List<JsonNode> history = new ArrayList<>();
        JsonNode given = body.path("conversation_history");
        if (!given.isMissingNode() && !given.isNull()) {
            if (!given.isArray()) {
                error(ex, 400, "'conversation_history' must be an array of message objects", null);
                return;
            }
            for (int i = 0; i < given.size(); i++) {
                JsonNode entry = given.get(i);
                if (!entry.isObject() || !entry.path("role").isTextual() || !entry.path("content").isTextual()) {
                    error(ex, 400, "conversation_history[" + i + "] must have 'role' and 'content' fields", null);
                    return;
                }
                history.add(entry);
            }
        }
        String session = body.path("session_id").asText(null);
        if (history.isEmpty() && line == Line.NEWER && session != null) {
            history.addAll(sessions.getOrDefault(session, List.of()));
        }
        String key = ex.header("Idempotency-Key");
        if (line == Line.NEWER && key != null) {
            String known = idempotency.get(key);
            if (known != null) {
                if (!runs.get(known).body.equals(body)) {
                    error(ex, 409, "Idempotency-Key was already used with a different request payload",
                            "idempotency_key_conflict");
                } else {
                    ex.json(202, "{\"run_id\": \"" + known + "\", \"status\": \"started\", \"replayed\": true}");
                }
                return;
            }
        }
        String id = "run_" + String.format("%032x", counter.incrementAndGet());
        StubRun run = new StubRun(id, body, List.copyOf(history));
        runs.put(id, run);
        order.add(run);
        if (line == Line.NEWER && key != null) {
            idempotency.put(key, id);
        }
        Thread player = new Thread(() -> play(run), "hermes-stub-" + id);
        player.setDaemon(true);
        player.start();
        if (dropStartAnswers.getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
            ex.reset();
            return;
        }
        ex.json(202, "{\"run_id\": \"" + id + "\", \"status\": \"started\"" + (line == Line.NEWER ? ", \"replayed\": false" : "")
                + "}");
    }

    /**
     * As Hermes checks the content of the last input item (the only one its agent gets as parts): text and
     * {@code image_url}/{@code input_image} parts only, images as {@code data:image/…} or http(s) URLs;
     * {@code code:message} of the 400 it answers otherwise, null if the content is fine.
     */
    private static String refusedContent(JsonNode content) {
        if (!content.isArray()) {
            return null;
        }
        for (JsonNode part : content) {
            String type = part.path("type").asText("").strip().toLowerCase(java.util.Locale.ROOT);
            if (type.equals("text") || type.equals("input_text")) {
                continue;
            }
            if (type.equals("image_url") || type.equals("input_image")) {
                JsonNode ref = part.path("image_url");
                String url = (ref.isObject() ? ref.path("url") : ref).asText("").strip().toLowerCase(java.util.Locale.ROOT);
                if (url.isEmpty()) {
                    return "invalid_image_url:Image parts must include a non-empty image URL.";
                }
                if (url.startsWith("data:") && (!url.startsWith("data:image/") || !url.contains(","))) {
                    return "unsupported_content_type:Only image data URLs are supported. Non-image data payloads are"
                            + " not supported.";
                }
                if (!url.startsWith("data:") && !url.startsWith("http://") && !url.startsWith("https://")) {
                    return "invalid_image_url:Image inputs must use http(s) URLs or data:image/... URLs.";
                }
                continue;
            }
            if (type.equals("file") || type.equals("input_file")) {
                return "unsupported_content_type:Inline image inputs are supported, but uploaded files and document"
                        + " inputs are not supported on this endpoint.";
            }
            return "unsupported_content_type:Unsupported content part type '" + type + "'. Only text and"
                    + " image_url/input_image parts are supported.";
        }
        return null;
    }

    private void events(RawServer.Exchange ex, StubRun run) throws Exception {
        if (!run.subscribed.compareAndSet(false, true)) {
            error(ex, 404, "Run not found: " + run.id, "run_not_found");
            return;
        }
        ex.streamHead();
        while (true) {
            String item = run.queue.poll(200, TimeUnit.MILLISECONDS);
            if (item == null) {
                ex.write(": keepalive\n\n");
            } else if (item.equals(RESET)) {
                ex.reset();
                return;
            } else if (item.equals(END)) {
                ex.write(": stream closed\n\n");
                return;
            } else {
                ex.write("data: " + item + "\n\n");
            }
        }
    }

    private void approve(RawServer.Exchange ex, StubRun run) throws Exception {
        JsonNode body = JSON.readTree(ex.body());
        String choice = body.path("choice").asText("").strip().toLowerCase(java.util.Locale.ROOT);
        choice = Map.of("approve", "once", "approved", "once", "allow", "once").getOrDefault(choice, choice);
        if (!List.of("once", "session", "always", "deny").contains(choice)) {
            error(ex, 400, "Invalid approval choice; expected one of: always, deny, once, session", "invalid_approval_choice");
            return;
        }
        String requestId = line == Line.NEWER ? body.path("request_id").asText(null) : null;
        List<StubRun.Waiting> targets = new ArrayList<>();
        synchronized (run.approvals) {
            if (requestId != null) {
                run.approvals.stream().filter(w -> requestId.equals(w.id)).findFirst().ifPresent(targets::add);
            } else if (body.path("all").asBoolean(false)) {
                targets.addAll(run.approvals);
            } else if (!run.approvals.isEmpty()) {
                targets.add(run.approvals.get(0));
            }
            run.approvals.removeAll(targets);
        }
        if (targets.isEmpty()) {
            error(ex, 409, "Run has no pending approval: " + run.id, "approval_not_pending");
            return;
        }
        ObjectNode responded = JSON.createObjectNode().put("event", "approval.responded").put("timestamp", 1.0)
                .put("choice", choice);
        if (requestId != null) {
            responded.put("request_id", requestId);
        }
        run.push(responded.put("resolved", targets.size()));
        for (StubRun.Waiting w : targets) {
            decisions.add(choice);
            w.answer = choice;
            w.answered.countDown();
        }
        ex.json(200, "{\"object\": \"hermes.run.approval_response\", \"run_id\": \"" + run.id + "\", \"choice\": \"" + choice
                + "\", \"resolved\": " + targets.size() + "}");
    }

    private void clarify(RawServer.Exchange ex, StubRun run) throws Exception {
        JsonNode body = JSON.readTree(ex.body());
        if (!body.path("clarify_id").isTextual() || !body.has("response")
                || !(body.path("response").isTextual() || body.path("response").isNull())) {
            error(ex, 400, "Expected clarify_id and response (string or null).", "invalid_clarify_response");
            return;
        }
        StubRun.Waiting waiting = run.clarify;
        if (waiting == null || !waiting.id.equals(body.path("clarify_id").asText()) || waiting.answered.getCount() == 0) {
            error(ex, 409, "Run has no matching pending clarify request.", "clarify_not_pending");
            return;
        }
        String response = body.path("response").asText();
        retire(run, waiting, "\u2705 answered: " + response);
        waiting.answer = response;
        waiting.answered.countDown();
        ex.json(200, "{\"object\": \"hermes.run.clarify_response\", \"run_id\": \"" + run.id + "\", \"clarify_id\": \""
                + waiting.id + "\", \"resolved\": true, \"awaiting_text\": false}");
    }

    private void stop(RawServer.Exchange ex, StubRun run) throws Exception {
        if (run.ended()) {
            if (line != Line.NEWER) {
                error(ex, 404, "Run not found: " + run.id, "run_not_found");
            } else {
                ex.json(200, run.statusJson());
            }
            return;
        }
        run.status("stopping", null);
        run.stop.countDown();
        ex.json(200, "{\"run_id\": \"" + run.id + "\", \"status\": \"stopping\"}");
    }

    // ------------------------------------------------------------------ the agent

    private void play(StubRun run) {
        List<JsonNode> script = fixture(line.dir + "/" + this.script.apply(run.body));
        run.status("running", null);
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < script.size(); i++) {
            JsonNode event = script.get(i);
            String name = event.path("event").asText();
            if (run.stop.getCount() == 0) {
                end(run, "cancelled", JSON.createObjectNode().put("event", "run.cancelled").put("timestamp", 1.0));
                return;
            }
            if (name.startsWith("run.")) {
                CountDownLatch hold = holdTerminal;
                String status = name.substring(4);
                run.status(status, event.has("output") ? event.path("output").asText() : null);
                if (hold != null) {
                    await(hold, Duration.ofSeconds(10), null);
                }
                if (status.equals("completed")) {
                    remember(run, event.path("output").asText());
                }
                end(run, status, event);
                return;
            }
            if (name.equals("message.delta")) {
                text.append(event.path("delta").asText());
            }
            run.push(event);
            if (!eventPause.isZero()) {
                await(new CountDownLatch(1), eventPause, run);
            }
            if (name.equals("approval.request")) {
                run.approvals.add(new StubRun.Waiting(event.path("request_id").asText(null)));
                run.status("waiting_for_approval", null);
                boolean more = i + 1 < script.size() && script.get(i + 1).path("event").asText().equals("approval.request");
                if (!more) {
                    for (StubRun.Waiting w : List.copyOf(run.approvals)) {
                        if (!await(w.answered, approvalTimeout, run)) {
                            run.approvals.remove(w);
                        }
                    }
                    run.status("running", null);
                }
            } else if (name.equals("clarify.request")) {
                StubRun.Waiting waiting = new StubRun.Waiting(event.path("clarify_id").asText());
                run.clarify = waiting;
                run.push(JSON.createObjectNode().put("event", "message.delta").put("timestamp", 1.0)
                        .put("delta", "\u2753 " + event.path("question").asText()));
                if (!await(waiting.answered, approvalTimeout, run)) {
                    retire(run, waiting, "\u23f1 The question expired without an answer.");
                }
            }
        }
        run.status("completed", text.toString());
        remember(run, text.toString());
        run.queue.add(RESET);
    }

    private void retire(StubRun run, StubRun.Waiting waiting, String notice) {
        run.push(JSON.createObjectNode().put("event", "clarify.retired").put("timestamp", 1.0)
                .put("clarify_id", waiting.id).put("notice", notice));
        run.push(JSON.createObjectNode().put("event", "message.delta").put("timestamp", 1.0).put("delta", notice));
    }

    private void end(StubRun run, String status, JsonNode event) {
        run.status(status, null);
        run.push(event);
        run.queue.add(END);
    }

    /** Newer lines keep the session's turns (user input, final answer) for the next run with its session_id. */
    private void remember(StubRun run, String output) {
        String session = run.body.path("session_id").asText(null);
        if (session == null) {
            return;
        }
        List<JsonNode> turns = sessions.computeIfAbsent(session, s -> new CopyOnWriteArrayList<>());
        turns.add(JSON.createObjectNode().put("role", "user").put("content", run.questionText()));
        turns.add(JSON.createObjectNode().put("role", "assistant").put("content", output));
    }

    /** Waits for the latch; false on timeout or a stop. */
    private static boolean await(CountDownLatch latch, Duration timeout, StubRun run) {
        long deadline = System.nanoTime() + timeout.toNanos();
        try {
            while (System.nanoTime() < deadline) {
                if (latch.await(20, TimeUnit.MILLISECONDS)) {
                    return true;
                }
                if (run != null && run.stop.getCount() == 0) {
                    return false;
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return false;
    }

    static List<JsonNode> fixture(String name) {
        List<JsonNode> events = new ArrayList<>();
        for (String line : Fixtures.text("api-server/" + name).split("\n")) {
            if (line.startsWith("data: ")) {
                try {
                    events.add(JSON.readTree(line.substring(6)));
                } catch (IOException e) {
                    throw new IllegalArgumentException("fixture " + name + " holds a line that is not JSON: " + line, e);
                }
            }
        }
        return events;
    }

    private static void error(RawServer.Exchange ex, int status, String message, String code) throws IOException {
        ObjectNode body = JSON.createObjectNode();
        ObjectNode error = body.putObject("error").put("message", message).put("type", "invalid_request_error");
        error.putNull("param");
        if (code == null) {
            error.putNull("code");
        } else {
            error.put("code", code);
        }
        ex.json(status, body.toString());
    }
}
