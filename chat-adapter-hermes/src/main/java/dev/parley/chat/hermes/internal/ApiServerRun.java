package dev.parley.chat.hermes.internal;

import static dev.parley.chat.hermes.internal.BridgeRun.orElse;
import static dev.parley.chat.hermes.internal.BridgeRun.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.hermes.HermesErrors;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.TodoItem;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.StreamPublisher;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import okhttp3.Request;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run over Hermes Agent's own API server: {@code POST /v1/runs} (the Parley run id is the
 * {@code Idempotency-Key}, so a retried start is safe), then {@code GET /v1/runs/{id}/events}. That
 * stream cannot be replayed: when it breaks, the run's outcome is polled from {@code GET /v1/runs/{id}}.
 * The mapping is in {@code docs/hermes-bridge-protocol.md}, part 2.
 */
public final class ApiServerRun extends RunLoop {
    private static final Logger log = LoggerFactory.getLogger(ApiServerRun.class);
    private static final Set<String> TERMINAL = Set.of("completed", "failed", "cancelled", "interrupted");
    private static final Set<String> APPROVAL_CHOICES = Set.of("once", "session", "always", "deny");
    /** The prefix of the clarify ids this adapter gives approval requests. */
    public static final String APPROVAL_PREFIX = "approval:";

    private final ObjectNode body;
    private final String sessionId;
    private final boolean resumedSession;
    private final int attempts;
    private final Duration backoff;
    private final Consumer<ApiServerRun> onEnd;

    private volatile @Nullable String hermesRunId;
    private volatile boolean cancelRequested;
    private final Map<String, Ask> asks = new ConcurrentHashMap<>();
    private final Map<String, Deque<String>> openTools = new HashMap<>();
    private int toolCounter;
    private int stepCounter;
    private @Nullable String thinkingId;

    /** A question this run asked: an approval (answered with a choice) or a clarify. */
    private record Ask(boolean approval, String remoteId, boolean multiSelect, List<String> choices, boolean answered) {
        Ask answeredNow() {
            return new Ask(approval, remoteId, multiSelect, choices, true);
        }
    }

    public ApiServerRun(HermesHttp http, RunRequest request, Redactor redactor, ObjectNode body, String sessionId,
            boolean resumedSession, int attempts, Duration backoff, StreamPublisher.Emitter<AgentStreamEvent> emitter,
            Consumer<ApiServerRun> onEnd) {
        super(http, request, redactor, emitter);
        this.body = body;
        this.sessionId = sessionId;
        this.resumedSession = resumedSession;
        this.attempts = attempts;
        this.backoff = backoff;
        this.onEnd = onEnd;
    }

    public String runId() {
        return runId;
    }

    @Override
    void finished() {
        onEnd.accept(this);
    }

    // ------------------------------------------------------------------ control calls

    /** Stops the run ({@code POST /v1/runs/{id}/stop}), now or as soon as the server named it. */
    public void cancel() {
        cancelRequested = true;
        String remote = hermesRunId;
        if (remote != null) {
            stopRemote(remote);
        }
    }

    private void stopRemote(String remote) {
        http.call(http.request(http.url("v1", "runs", remote, "stop")).post(http.jsonBody(http.json().createObjectNode()))
                .build(), "stopping the Hermes run");
    }

    /** Answers an approval request or a clarify question of this run. */
    public void answer(ClarifyReply reply) {
        String remote = hermesRunId;
        Ask ask = asks.get(reply.clarifyId());
        if (remote == null || ask == null) {
            throw ChatException.notFound("clarify", reply.clarifyId());
        }
        // marked first: Hermes retires the question as soon as it takes the answer, maybe before we return
        asks.put(reply.clarifyId(), ask.answeredNow());
        try {
            if (ask.approval()) {
                answerApproval(http, remote, ask.remoteId(), reply, ask.choices());
            } else {
                answerClarify(http, remote, ask.remoteId(), reply, ask.multiSelect());
            }
        } catch (RuntimeException e) {
            asks.put(reply.clarifyId(), ask);
            throw e;
        }
    }

    /** {@code POST /v1/runs/{id}/approval}; {@code offered} limits the choice when known. */
    public static void answerApproval(HermesHttp http, String remoteRunId, String requestId, ClarifyReply reply,
            List<String> offered) {
        String choice = reply.answer().get(0).strip().toLowerCase(Locale.ROOT);
        boolean allowed = offered.isEmpty() ? APPROVAL_CHOICES.contains(choice) : offered.contains(choice);
        if (reply.answer().size() != 1 || !allowed) {
            throw ChatException.invalidInput("an approval is answered with one of "
                    + (offered.isEmpty() ? APPROVAL_CHOICES : offered));
        }
        ObjectNode payload = http.json().createObjectNode().put("choice", choice).put("request_id", requestId);
        http.call(http.request(http.url("v1", "runs", remoteRunId, "approval")).post(http.jsonBody(payload)).build(),
                "answering the Hermes approval request");
    }

    /** {@code POST /v1/runs/{id}/clarify}: a multi-select answer is a JSON array inside the string. */
    public static void answerClarify(HermesHttp http, String remoteRunId, String clarifyId, ClarifyReply reply,
            boolean multiSelect) {
        String response;
        if (multiSelect || reply.answer().size() > 1) {
            response = http.json().createArrayNode().addAll(reply.answer().stream()
                    .map(a -> http.json().getNodeFactory().textNode(a)).toList()).toString();
        } else {
            response = reply.answer().get(0);
        }
        ObjectNode payload = http.json().createObjectNode().put("clarify_id", clarifyId).put("response", response);
        http.call(http.request(http.url("v1", "runs", remoteRunId, "clarify")).post(http.jsonBody(payload)).build(),
                "answering the Hermes clarify question");
    }

    // ------------------------------------------------------------------ the run

    @Override
    void execute() {
        String remote = start();
        if (remote == null) {
            return;
        }
        hermesRunId = remote;
        if (!emit(new AgentStreamEvent.RuntimeSession(sessionId, resumedSession))) {
            return;
        }
        if (cancelRequested) {
            try {
                stopRemote(remote);
            } catch (ChatException e) {
                log.warn("Run {}: stopping Hermes run {} failed: {}", runId, remote, e.getMessage());
            }
        }
        Opened opened = open(http.request(http.url("v1", "runs", remote, "events"))
                .header("Accept", "text/event-stream").get().build());
        if (opened.stopped()) {
            return;
        }
        String problem;
        if (opened.error() != null) {
            problem = "opening the event stream answered " + opened.error().code();
        } else if (opened.failure() != null) {
            problem = http.describe(opened.failure());
        } else {
            SseReader.Ending ending = read(opened, this::onFrame);
            if (isTerminal() || isStopped()) {
                return;
            }
            Throwable failure = ending.failure();
            if (failure != null && !(failure instanceof IOException)) {
                emit(new AgentStreamEvent.RunFailed(HermesErrors.PROTOCOL_ERROR,
                        "the Hermes API server's stream could not be read (" + failure.getClass().getSimpleName() + ")"));
                return;
            }
            problem = failure == null ? "the stream ended without a run.* event" : http.describe(failure);
        }
        poll(remote, problem);
    }

    /** Starts the run; retries I/O failures (safe: the run id is the idempotency key). Null if it failed. */
    private @Nullable String start() {
        Request post = http.request(http.url("v1", "runs")).header("Idempotency-Key", runId)
                .post(http.jsonBody(body)).build();
        for (int attempt = 0; ; attempt++) {
            Opened opened = open(post);
            if (opened.stopped()) {
                return null;
            }
            RemoteError error = opened.error();
            if (error != null) {
                emit(new AgentStreamEvent.RunFailed(error.runCode(), error.message()));
                return null;
            }
            IOException failure = opened.failure();
            if (failure == null) {
                try (okhttp3.Response response = opened.response()) {
                    JsonNode answer = http.json().readTree(response.body().string());
                    String remote = text(answer, "run_id");
                    if (remote == null) {
                        emit(new AgentStreamEvent.RunFailed(HermesErrors.PROTOCOL_ERROR,
                                "the Hermes API server accepted the run without a run_id"));
                    }
                    return remote;
                } catch (IOException e) {
                    failure = e;
                }
            }
            if (opened.unreachable() || attempt >= attempts) {
                emit(new AgentStreamEvent.RunFailed(ErrorCode.RUNTIME_UNAVAILABLE.name(),
                        "cannot start the run on the Hermes API server at " + http.where() + ": " + http.describe(failure)));
                return null;
            }
            if (!pause(backoff.multipliedBy(1L << Math.min(attempt, 6)))) {
                return null;
            }
        }
    }

    /** After a lost stream: the API server cannot replay events, so wait for the outcome in the run status. */
    private void poll(String remote, String problem) {
        log.info("Run {}: the Hermes event stream was lost ({}); polling the run status", runId, problem);
        if (!emit(new AgentStreamEvent.StatusUpdate(runId + ":status:stream-lost", "warn",
                "The live event stream from Hermes was lost; waiting for the run's result without live progress."))) {
            return;
        }
        int failures = 0;
        while (true) {
            if (!pause(backoff)) {
                return;
            }
            HermesHttp.Probe probe = http.probe(http.request(http.url("v1", "runs", remote)).get().build());
            if (probe == null || probe.status() >= 500) {
                if (++failures > attempts) {
                    emit(new AgentStreamEvent.RunFailed(HermesErrors.STREAM_LOST, "the stream from the Hermes API server "
                            + "was lost (" + problem + ") and its run status could not be read"));
                    return;
                }
                continue;
            }
            if (probe.status() >= 300) {
                emit(new AgentStreamEvent.RunFailed(HermesErrors.STREAM_LOST, "the stream from the Hermes API server was "
                        + "lost (" + problem + ") and the server no longer knows the run (HTTP " + probe.status() + ")"));
                return;
            }
            failures = 0;
            String status = orElse(text(probe.json(), "status"), "");
            if (TERMINAL.contains(status)) {
                terminal("run." + status, probe.json());
                return;
            }
        }
    }

    // ------------------------------------------------------------------ events

    private boolean onFrame(@Nullable String id, @Nullable String type, String data) {
        JsonNode event;
        try {
            event = http.json().readTree(data);
        } catch (IOException e) {
            emit(new AgentStreamEvent.RunFailed(HermesErrors.PROTOCOL_ERROR, "an event from the Hermes API server is not JSON"));
            return false;
        }
        if (event == null || !event.isObject()) {
            emit(new AgentStreamEvent.RunFailed(HermesErrors.PROTOCOL_ERROR,
                    "an event from the Hermes API server is not a JSON object"));
            return false;
        }
        String name = orElse(text(event, "event"), type == null ? "" : type);
        return map(name, event) && !isTerminal();
    }

    private boolean map(String name, JsonNode e) {
        switch (name) {
            case "message.delta":
                thinkingId = null;
                return emit(new AgentStreamEvent.TextDelta(request.assistantMessageId(), clean(orElse(text(e, "delta"), ""))));
            case "message.interim":
                if (e.path("already_streamed").asBoolean(false)) {
                    return true;
                }
                return emit(new AgentStreamEvent.StatusUpdate(nextStep("status"), "interim", clean(orElse(text(e, "text"), ""))));
            case "reasoning.delta": {
                if (thinkingId == null) {
                    thinkingId = nextStep("thinking");
                }
                return emit(new AgentStreamEvent.ThinkingDelta(thinkingId,
                        clean(orElse(text(e, "delta"), orElse(text(e, "text"), "")))));
            }
            case "reasoning.available":
                thinkingId = null;
                return emit(new AgentStreamEvent.ThinkingDelta(nextStep("thinking"), clean(orElse(text(e, "text"), ""))));
            case "tool.started":
                return onToolStarted(e);
            case "tool.completed":
                return onToolCompleted(e);
            case "approval.request":
                return onApproval(e);
            case "clarify.request":
                return onClarify(e);
            case "clarify.retired": {
                String clarifyId = text(e, "clarify_id");
                Ask ask = clarifyId == null ? null : asks.get(clarifyId);
                if (ask != null && !ask.answered()) {
                    asks.put(clarifyId, ask.answeredNow());
                    return emit(new AgentStreamEvent.ClarifyResolved(clarifyId, AgentStreamEvent.ClarifyOutcome.CANCELLED,
                            List.of()));
                }
                return true;
            }
            case "subagent.start":
                return emit(new AgentStreamEvent.StatusUpdate(nextStep("status"), "subagent",
                        clean("Subagent started: " + orElse(text(e, "goal"), orElse(text(e, "preview"), "")))));
            case "subagent.complete":
                return emit(new AgentStreamEvent.StatusUpdate(nextStep("status"), "subagent",
                        clean("Subagent finished: " + orElse(text(e, "summary"), orElse(text(e, "status"), "")))));
            case "run.completed":
            case "run.failed":
            case "run.cancelled":
            case "run.interrupted":
                terminal(name, e);
                return false;
            default:
                log.debug("Run {}: ignoring a Hermes event of kind {}", runId, name);
                return true;
        }
    }

    private String nextStep(String kind) {
        return runId + ":" + kind + ":" + (++stepCounter);
    }

    private boolean onToolStarted(JsonNode e) {
        thinkingId = null;
        String tool = orElse(text(e, "tool"), "tool");
        String executionId = "call-" + (++toolCounter);
        openTools.computeIfAbsent(tool, k -> new ArrayDeque<>()).addLast(executionId);
        ObjectNode args = http.json().createObjectNode();
        String preview = text(e, "preview");
        if (preview != null) {
            args.put("preview", preview);
        }
        return emit(new AgentStreamEvent.ToolCallStart(runId + ":tool:" + executionId, executionId, tool,
                clean(args.toString())));
    }

    private boolean onToolCompleted(JsonNode e) {
        thinkingId = null;
        String tool = orElse(text(e, "tool"), "tool");
        Deque<String> open = openTools.get(tool);
        String executionId = open == null || open.isEmpty() ? null : open.pollFirst();
        if (executionId == null) {
            executionId = "call-" + (++toolCounter);
            if (!emit(new AgentStreamEvent.ToolCallStart(runId + ":tool:" + executionId, executionId, tool, "{}"))) {
                return false;
            }
        }
        String preview = orElse(text(e, "preview"), "");
        if (!emit(new AgentStreamEvent.ToolCallResult(runId + ":result:" + executionId, executionId, clean(preview),
                e.path("error").asBoolean(false)))) {
            return false;
        }
        if (tool.equals("todo") || tool.equals("todo_list")) {
            List<TodoItem> todos = todosFrom(preview);
            if (todos != null) {
                return emit(new AgentStreamEvent.TodosUpdated(runId + ":todo", todos));
            }
        }
        return true;
    }

    /** The todo list in a todo tool's result preview, or null if the (possibly truncated) preview is not one. */
    private @Nullable List<TodoItem> todosFrom(String preview) {
        try {
            JsonNode result = http.json().readTree(preview);
            if (result == null || !result.path("todos").isArray()) {
                return null;
            }
            List<TodoItem> items = new ArrayList<>();
            for (JsonNode item : result.path("todos")) {
                String id = text(item, "id");
                if (id != null) {
                    items.add(new TodoItem(id, clean(orElse(text(item, "content"), "")),
                            BridgeRun.todoStatus(text(item, "status")), text(item, "parent")));
                }
            }
            return items;
        } catch (IOException truncated) {
            return null;
        }
    }

    private boolean onApproval(JsonNode e) {
        thinkingId = null;
        String requestId = orElse(text(e, "request_id"), text(e, "approval_id"));
        if (requestId == null) {
            log.warn("Run {}: an approval request without a request_id cannot be answered; ignoring it", runId);
            return true;
        }
        List<String> choices = new ArrayList<>();
        for (JsonNode choice : e.path("choices")) {
            if (choice.isTextual()) {
                choices.add(choice.asText());
            }
        }
        if (choices.isEmpty()) {
            choices.addAll(List.of("once", "session", "always", "deny"));
        }
        StringBuilder question = new StringBuilder("Hermes asks for approval");
        String description = text(e, "description");
        question.append(description == null ? "." : ": " + description);
        String command = text(e, "command");
        if (command != null) {
            question.append("\n\n").append(command);
        }
        String clarifyId = APPROVAL_PREFIX + requestId;
        asks.put(clarifyId, new Ask(true, requestId, false, List.copyOf(choices), false));
        return emit(new AgentStreamEvent.ClarifyRequested(runId + ":clarify:" + clarifyId, clarifyId,
                clean(question.toString()), choices, false, null));
    }

    private boolean onClarify(JsonNode e) {
        thinkingId = null;
        String clarifyId = text(e, "clarify_id");
        if (clarifyId == null) {
            log.warn("Run {}: a clarify request without a clarify_id cannot be answered; ignoring it", runId);
            return true;
        }
        List<String> choices = new ArrayList<>();
        for (JsonNode choice : e.path("choices")) {
            if (choice.isTextual()) {
                choices.add(clean(choice.asText()));
            }
        }
        boolean multi = e.path("multi_select").asBoolean(false);
        asks.put(clarifyId, new Ask(false, clarifyId, multi, List.copyOf(choices), false));
        return emit(new AgentStreamEvent.ClarifyRequested(runId + ":clarify:" + clarifyId, clarifyId,
                clean(orElse(text(e, "question"), "")), choices, multi, null));
    }

    /** Maps a terminal event (or a terminal run status object, named {@code run.<status>}). */
    private void terminal(String name, JsonNode e) {
        String output = text(e, "output");
        String error = text(e, "error");
        String reason = text(e, "turn_exit_reason");
        if (output != null && !(name.equals("run.failed") && error != null)) {
            emit(new AgentStreamEvent.TextFinal(request.assistantMessageId(), clean(output)));
        }
        JsonNode usage = e.path("usage");
        if (usage.isObject()) {
            long in = Math.max(0, usage.path("input_tokens").asLong(0));
            long out = Math.max(0, usage.path("output_tokens").asLong(0));
            emit(new AgentStreamEvent.Usage(in, out, Math.max(0, usage.path("total_tokens").asLong(in + out))));
        }
        switch (name) {
            case "run.completed":
                emit(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
                break;
            case "run.cancelled":
                emit(new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, clean(orElse(reason, "stopped"))));
                break;
            case "run.interrupted":
                emit(new AgentStreamEvent.RunFinished(RunStatus.INTERRUPTED,
                        clean(orElse(error, "the Hermes gateway stopped while the run was active"))));
                break;
            default:
                emit(new AgentStreamEvent.RunFailed(ErrorCode.RUNTIME_FAILED.name(), clean(error != null ? error
                        : "the run did not finish" + (reason == null ? "" : ": " + reason))));
        }
    }
}
