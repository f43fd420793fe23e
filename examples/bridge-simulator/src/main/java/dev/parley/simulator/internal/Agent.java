package dev.parley.simulator.internal;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.simulator.Scenario;
import dev.parley.simulator.SimulatorConfig;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Plays one run's scenario on its own thread, appending frames to the run's log at the configured
 * rate. Always ends the log with exactly one {@code done}. Whatever the scenario, an answer to a question with
 * files starts with a line per file naming it, its type, size and hash, so that a person sees they arrived.
 */
public final class Agent implements Runnable {
    private static final Logger log = LoggerFactory.getLogger(Agent.class);
    private static final ObjectMapper JSON = new ObjectMapper();

    private final SimRun run;
    private final String requestedSession;
    private final boolean resumedSession;
    private final double eventsPerSecond;
    private final int longCount;
    private final SimulatorConfig config;
    private final ApprovalMemory approvals;
    private final Consumer<SimRun> onEnd;
    private final Consumer<String> onRotate;
    private long nextAt;
    private int tokens;
    private boolean filesNamed;

    /**
     * @param approvals what earlier runs approved for their session, or for good
     * @param onRotate told the new session id when the ROTATE scenario rotates it
     */
    public Agent(SimRun run, String requestedSession, boolean resumedSession, SimulatorConfig config,
            ApprovalMemory approvals, Consumer<String> onRotate, Consumer<SimRun> onEnd) {
        this.run = run;
        this.requestedSession = requestedSession;
        this.resumedSession = resumedSession;
        this.eventsPerSecond = run.scenario() == Scenario.SLOW ? config.slowEventsPerSecond() : config.eventsPerSecond();
        this.longCount = config.longCount();
        this.config = config;
        this.approvals = approvals;
        this.onRotate = onRotate;
        this.onEnd = onEnd;
    }

    @Override
    public void run() {
        try {
            ObjectNode started = node().put("sessionId", requestedSession).put("hermesSessionId", run.hermesSessionId())
                    .put("resumedSession", resumedSession).put("scenario", run.scenario().name().toLowerCase(java.util.Locale.ROOT));
            run.append("run_started", started);
            play();
        } catch (SimRun.Cancelled cancelled) {
            run.status("cancelled");
            done("cancelled");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            fail("INTERNAL", "the simulator shut down during the run");
        } catch (RuntimeException e) {
            log.error("Simulated run {} failed", run.runId(), e);
            fail("INTERNAL", "the simulator failed: " + e.getClass().getSimpleName());
        } finally {
            onEnd.accept(run);
        }
    }

    private void play() throws SimRun.Cancelled, InterruptedException {
        switch (run.scenario()) {
            case TOOLS:
                tools();
                break;
            case CLARIFY:
                clarify();
                break;
            case FAIL:
                failing();
                break;
            case LONG:
                longStream();
                break;
            case SLOW:
                answer(plainAnswer() + "\n\n" + longerText(), false);
                break;
            case ROTATE:
                answer(plainAnswer(), true);
                break;
            case HOST_TOOL:
                hostTool();
                break;
            case APPROVE:
                approve();
                break;
            case DROP:
            case PLAIN:
            default:
                answer(plainAnswer(), false);
        }
    }

    // ------------------------------------------------------------------ scenarios

    private void answer(String text, boolean rotate) throws SimRun.Cancelled, InterruptedException {
        emit("status", node().put("level", "lifecycle").put("text", "Thinking (simulated)"));
        think("The person wrote " + run.userMessage().length() + " characters. A short Markdown answer will do.");
        List<String> parts = split(text);
        for (int i = 0; i < parts.size(); i++) {
            if (rotate && i == parts.size() / 2) {
                String next = "hs-" + UUID.randomUUID();
                String previous = run.hermesSessionId();
                run.hermesSessionId(next);
                onRotate.accept(next);
                emit("status", node().put("level", "lifecycle").put("text", "Context compressed; new session (simulated)"));
                emit("session_rotated", node().put("hermesSessionId", next).put("previousHermesSessionId", previous)
                        .put("reason", "compression"));
            }
            delta(parts.get(i));
        }
        finish(text);
    }

    private void tools() throws SimRun.Cancelled, InterruptedException {
        emit("status", node().put("level", "lifecycle").put("text", "Planning (simulated)"));
        think("I will search first, then read the best result, then answer.");
        todos(1, "in_progress", "pending", "pending");
        String search = Ids.next("t");
        emit("tool_call", node().put("toolCallId", search).put("toolName", "web_search")
                .<ObjectNode>set("args", node().put("query", clip(run.userMessage(), 120))).put("preview", "web_search"));
        emit("tool_result", node().put("toolCallId", search).put("toolName", "web_search")
                .put("result", "3 results (simulated): docs/guide.md, docs/faq.md, blog/intro.md").put("truncated", false)
                .put("isError", false).put("durationMs", 120));
        todos(2, "completed", "in_progress", "pending");
        think("The guide looks most relevant; reading it.");
        String read = Ids.next("t");
        emit("tool_call", node().put("toolCallId", read).put("toolName", "read_file")
                .<ObjectNode>set("args", node().put("path", "docs/guide.md")).put("preview", "docs/guide.md"));
        emit("tool_result", node().put("toolCallId", read).put("toolName", "read_file")
                .put("result", "# Guide (simulated)\nStep 1: plan. Step 2: act. Step 3: report.").put("truncated", false)
                .put("isError", false).put("durationMs", 35));
        todos(3, "completed", "completed", "in_progress");
        String text = "Based on **the guide** (simulated):\n\n1. plan\n2. act\n3. report\n";
        for (String part : split(text)) {
            delta(part);
        }
        todos(4, "completed", "completed", "completed");
        finish(text);
    }

    private void todos(int revision, String first, String second, String third) throws SimRun.Cancelled, InterruptedException {
        ArrayNode items = JSON.createArrayNode();
        items.addObject().put("id", "1").put("content", "Search the docs").put("status", first).putNull("parent");
        items.addObject().put("id", "2").put("content", "Read the best result").put("status", second).putNull("parent");
        items.addObject().put("id", "3").put("content", "Write the answer").put("status", third).putNull("parent");
        emit("todo_update", node().put("revision", revision).set("todos", items));
    }

    private void clarify() throws SimRun.Cancelled, InterruptedException {
        think("The request is ambiguous; asking which format the person wants.");
        pace();
        String clarifyId = Ids.next("c");
        ObjectNode question = node().put("clarifyId", clarifyId).put("question", "Which format should the answer use? (simulated)");
        question.putArray("choices").add("Markdown").add("Plain text").add("A table");
        question.put("multiSelect", false).putNull("questions");
        run.ask(clarifyId, question);
        List<String> answer;
        try {
            answer = run.awaitAnswer(clarifyId);
        } catch (SimRun.Cancelled withdrawn) {
            run.append("clarify_resolved", node().put("clarifyId", clarifyId).put("outcome", "cancelled"));
            throw withdrawn;
        }
        emit("clarify_resolved", node().put("clarifyId", clarifyId).put("outcome", "answered"));
        think("The person chose " + String.join(", ", answer) + ".");
        String text = "You chose **" + String.join(", ", answer) + "**. Here is the answer in that format (simulated).";
        for (String part : split(text)) {
            delta(part);
        }
        finish(text);
    }

    private void failing() throws SimRun.Cancelled, InterruptedException {
        think("Trying the tool that is going to break.");
        emit("status", node().put("level", "warn").put("text", "The model provider is slow (simulated)"));
        for (String part : split("Let me look that up ")) {
            delta(part);
        }
        emit("error", node().put("code", "AGENT_ERROR").put("message", "The simulated agent failed on purpose")
                .put("retryable", false));
        run.status("failed");
        done("failed");
    }

    private void longStream() throws SimRun.Cancelled, InterruptedException {
        int n = Scenario.longCount(run.userMessage(), longCount);
        StringBuilder text = new StringBuilder(n * 7);
        for (int i = 0; i < n; i++) {
            String token = "t" + i + " ";
            text.append(token);
            delta(token);
        }
        finish(text.toString());
    }

    private void hostTool() throws SimRun.Cancelled, InterruptedException {
        if (run.hostTools().isEmpty()) {
            emit("status", node().put("level", "warn").put("text", "The host offered no tools (simulated)"));
            answer(plainAnswer(), false);
            return;
        }
        String tool = toolNamedIn(run.userMessage(), run.hostTools());
        think("Asking the host's " + tool + " tool.");
        pace();
        String callId = Ids.next("h");
        ObjectNode call = node().put("toolCallId", callId).put("toolName", tool)
                .<ObjectNode>set("args", argumentsIn(run.userMessage())).put("preview", tool);
        run.callHostTool(callId, call);
        SimRun.ToolOutcome outcome = run.awaitToolResult(callId);
        emit("tool_result", node().put("toolCallId", callId).put("toolName", tool).put("result", outcome.result())
                .put("truncated", false).put("isError", outcome.error()).put("durationMs", 0));
        String text = "The host tool **" + tool + "** answered: " + outcome.result();
        for (String part : split(text)) {
            delta(part);
        }
        finish(text);
    }

    /**
     * Hermes' terminal tool with a command its guards flag: asked unless approved before under the run's key,
     * never asked of a client that cannot answer (then blocked), run or blocked as decided.
     */
    private void approve() throws SimRun.Cancelled, InterruptedException {
        String command = "rm -rf ./build/tmp-sim";
        String pattern = "recursive delete";
        think("Cleaning up needs a shell command, and Hermes asks before a recursive delete.");
        String callId = Ids.next("t");
        emit("tool_call", node().put("toolCallId", callId).put("toolName", "terminal")
                .<ObjectNode>set("args", node().put("command", command)).put("preview", command));
        String outcome;
        if (!run.clientTakesApprovals()) {
            emit("status", node().put("level", "warn")
                    .put("text", "This client cannot approve commands, so the command was blocked (simulated)"));
            outcome = "blocked";
        } else if (approvals.approved(run.approvalKey(), pattern)) {
            outcome = "remembered";
        } else {
            outcome = askApproval(callId, command, pattern);
        }
        String result;
        String text;
        switch (outcome) {
            case "deny":
                result = "BLOCKED: the person denied this command (simulated)";
                text = "You denied `" + command + "`, so I left the files alone (simulated).";
                break;
            case SimRun.EXPIRED:
                result = "BLOCKED: the approval timed out (simulated)";
                text = "Nobody approved `" + command + "` in time, so I left the files alone (simulated).";
                break;
            case "blocked":
                result = "BLOCKED: the client cannot approve commands (simulated)";
                text = "I could not ask you to approve `" + command + "`, so I left the files alone (simulated).";
                break;
            default:
                result = "removed 3 files from ./build/tmp-sim (simulated)";
                text = "I ran `" + command + "`; the temporary build files are gone (simulated)."
                        + (outcome.equals("remembered") ? " It was approved earlier, so I did not ask again." : "");
        }
        boolean ran = result.startsWith("removed");
        emit("tool_result", node().put("toolCallId", callId).put("toolName", "terminal").put("result", result)
                .put("truncated", false).put("isError", !ran).put("durationMs", ran ? 40 : 0));
        for (String part : split(text)) {
            delta(part);
        }
        finish(text);
    }

    /** Asks, waits, reports the end of the wait; returns the decision or {@link SimRun#EXPIRED}. */
    private String askApproval(String callId, String command, String pattern)
            throws SimRun.Cancelled, InterruptedException {
        pace();
        long timeout = config.approvalTimeout().toNanos();
        String approvalId = Ids.next("a");
        ObjectNode ask = node().put("approvalId", approvalId).put("toolCallId", callId).put("toolName", "terminal")
                .put("command", command).put("description", pattern + " (simulated)").put("patternKey", pattern);
        ask.putArray("patternKeys").add(pattern);
        ask.putArray("choices").add("once").add("session").add("always").add("deny");
        if (timeout > 0) {
            ask.put("expiresAt", Instant.now().plusNanos(timeout).toEpochMilli());
            timeout += config.approvalTimerLag().toNanos();
        } else {
            ask.putNull("expiresAt");
        }
        run.askApproval(ask);
        String decision;
        try {
            decision = run.awaitDecision(approvalId, timeout);
        } catch (SimRun.Cancelled withdrawn) {
            run.append("approval_resolved", node().put("approvalId", approvalId).put("outcome", "cancelled").putNull("decision"));
            throw withdrawn;
        }
        ObjectNode resolved = node().put("approvalId", approvalId);
        if (decision.equals(SimRun.EXPIRED)) {
            resolved.put("outcome", "expired").putNull("decision");
        } else {
            resolved.put("outcome", "answered").put("decision", decision);
            approvals.remember(run.approvalKey(), pattern, decision);
        }
        run.append("approval_resolved", resolved);
        return decision;
    }

    /** The first offered tool whose name the message contains (ignoring case), else the first offered. */
    /** The longest offered name the message mentions (so {@code read_text_file} beats {@code read}), else the first. */
    private static String toolNamedIn(String message, List<String> offered) {
        String text = message.toLowerCase(java.util.Locale.ROOT);
        return offered.stream().filter(name -> text.contains(name.toLowerCase(java.util.Locale.ROOT)))
                .max(java.util.Comparator.comparingInt(String::length)).orElse(offered.get(0));
    }

    /**
     * The call's arguments: the JSON object the message holds (from its first {@code {} to its last
     * {@code }}), so a person can call any tool with the arguments it needs; else {@code {"input": message}}.
     */
    private static ObjectNode argumentsIn(String message) {
        int open = message.indexOf('{');
        int close = message.lastIndexOf('}');
        if (open >= 0 && close > open) {
            try {
                if (JSON.readTree(message.substring(open, close + 1)) instanceof ObjectNode given) {
                    return given;
                }
            } catch (com.fasterxml.jackson.core.JsonProcessingException notJson) {
                // not an object: the message itself is the input
            }
        }
        return node().put("input", clip(message, 200));
    }

    // ------------------------------------------------------------------ frames

    private void think(String text) throws SimRun.Cancelled, InterruptedException {
        for (String part : split(text)) {
            emit("thinking", node().put("text", part));
        }
    }

    private void delta(String text) throws SimRun.Cancelled, InterruptedException {
        nameFiles();
        tokens++;
        emit("text_delta", node().put("text", text));
    }

    /** Before the answer's first token: a line per file of the question, once. */
    private void nameFiles() throws SimRun.Cancelled, InterruptedException {
        if (filesNamed || run.attachments().isEmpty()) {
            return;
        }
        filesNamed = true;
        tokens++;
        emit("text_delta", node().put("text", filesReceived()));
    }

    /** {@code Received cat.png (image/png, 1234 bytes, sha256 0123456789ab)} a line per file, or "" for none. */
    private String filesReceived() {
        if (run.attachments().isEmpty()) {
            return "";
        }
        StringBuilder text = new StringBuilder();
        run.attachments().forEach(file -> text.append(file.describe()).append('\n'));
        return text.append('\n').toString();
    }

    private void usage() throws SimRun.Cancelled, InterruptedException {
        long in = Math.max(1, run.userMessage().length() / 4);
        emit("usage", node().put("inputTokens", in).put("outputTokens", tokens).put("totalTokens", in + tokens));
    }

    private void finish(String text) throws SimRun.Cancelled, InterruptedException {
        nameFiles();
        usage();
        emit("final", node().put("text", filesReceived() + text));
        run.status("completed");
        done("completed");
    }

    private void done(String status) {
        run.append("done", node().put("status", status).put("hermesSessionId", run.hermesSessionId()));
    }

    private void fail(String code, String message) {
        if (run.ended()) {
            return;
        }
        run.append("error", node().put("code", code).put("message", message).put("retryable", true));
        run.status("failed");
        done("failed");
    }

    private void emit(String kind, ObjectNode payload) throws SimRun.Cancelled, InterruptedException {
        pace();
        run.append(kind, payload);
    }

    /** Waits for the next slot at the configured rate; checks for a cancel either way. */
    private void pace() throws SimRun.Cancelled, InterruptedException {
        if (eventsPerSecond <= 0) {
            run.checkCancelled();
            return;
        }
        long interval = (long) (1_000_000_000L / eventsPerSecond);
        long now = System.nanoTime();
        if (nextAt == 0) {
            nextAt = now;
        }
        nextAt += interval;
        run.sleepNanos(Math.max(0, nextAt - now));
    }

    // ------------------------------------------------------------------ text

    private String plainAnswer() {
        String quoted = clip(run.userMessage(), 400).replace("\n", "\n> ");
        return "### Simulated answer\n\nYou wrote:\n\n> " + quoted + "\n\nThis reply comes from the **Hermes Bridge "
                + "simulator**, not from a model. It streams like one: a short reasoning step, this answer token by "
                + "token, and the token usage at the end.\n\nTry `tools`, `clarify`, `approve`, `fail`, `slow`, `drop` "
                + "or `long 5000` to see the other scenarios.";
    }

    private static String longerText() {
        return "Streaming slowly lets you watch each token arrive, stop the run half way (the partial answer is "
                + "kept), or close the page and come back: the run goes on without you and the page catches up "
                + "from where it left off. Nothing here was written by a model; every word is scripted.";
    }

    /** Splits after each space, so the pieces concatenate to the text. */
    static List<String> split(String text) {
        List<String> parts = new ArrayList<>();
        int start = 0;
        for (int i = 0; i < text.length(); i++) {
            if (text.charAt(i) == ' ') {
                parts.add(text.substring(start, i + 1));
                start = i + 1;
            }
        }
        if (start < text.length()) {
            parts.add(text.substring(start));
        }
        return parts;
    }

    private static String clip(String text, int max) {
        return text.length() <= max ? text : text.substring(0, max) + "…";
    }

    private static ObjectNode node() {
        return JSON.createObjectNode();
    }
}
