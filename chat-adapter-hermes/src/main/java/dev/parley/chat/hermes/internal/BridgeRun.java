package dev.parley.chat.hermes.internal;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.hermes.HermesErrors;
import dev.parley.chat.model.TodoItem;
import dev.parley.chat.model.TodoStatus;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.StreamPublisher;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Consumer;
import okhttp3.HttpUrl;
import okhttp3.Request;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run over the Bridge protocol v1: {@code POST /run}, mapping each frame to events, retrying once
 * without the session on {@code 410 SESSION_NOT_FOUND}, and re-attaching with
 * {@code GET /runs/{id}/events?after=N} when the stream breaks before {@code done}. See
 * {@code docs/hermes-bridge-protocol.md}; this class does what it says.
 */
public final class BridgeRun extends RunLoop {
    private static final Logger log = LoggerFactory.getLogger(BridgeRun.class);

    /** How a stream ended, seen from the run. */
    private enum Outcome {
        /** The terminal event went out. */
        DONE,
        /** The subscriber left. */
        STOPPED,
        /** Connection reset or another I/O failure (also before the response head). */
        BROKEN,
        /** The body ended without {@code done}. */
        TRUNCATED,
        /** Nothing arrived within the idle timeout. */
        STALLED
    }

    private final ObjectNode body;
    private final @Nullable Long resumeAfter;
    private final int reattachAttempts;
    private final Duration reattachBackoff;
    private final Set<String> hostToolNames;
    private final Set<String> hostCallIds = new HashSet<>();
    private final Consumer<BridgeRun> onEnd;

    private volatile long lastSeq;
    private volatile boolean started;
    private volatile boolean cancelRequested;
    private @Nullable String thinkingId;
    private @Nullable String reportedSession;
    private @Nullable String protocolError;
    private boolean everOpened;
    private String lastProblem = "";

    /**
     * @param body the {@code POST /run} body without {@code sessionId} (added here)
     * @param resumeAfter null to start the run; else the seq to re-attach after (a restarted host)
     */
    public BridgeRun(HermesHttp http, RunRequest request, Redactor redactor, ObjectNode body, @Nullable Long resumeAfter,
            int reattachAttempts, Duration reattachBackoff, StreamPublisher.Emitter<AgentStreamEvent> emitter,
            Consumer<BridgeRun> onEnd) {
        super(http, request, redactor, emitter);
        this.body = body;
        this.resumeAfter = resumeAfter;
        this.reattachAttempts = reattachAttempts;
        this.reattachBackoff = reattachBackoff;
        this.onEnd = onEnd;
        this.reportedSession = request.runtimeSessionId();
        this.hostToolNames = new HashSet<>();
        request.hostTools().forEach(t -> hostToolNames.add(t.name()));
    }

    public String runId() {
        return runId;
    }

    /** True once the Bridge confirmed the run ({@code run_started} or a re-attached stream). */
    public boolean started() {
        return started;
    }

    /**
     * Remembers a cancel asked for before the Bridge confirmed the run; it is sent again as soon as the
     * stream opens.
     */
    public void cancelRequested() {
        cancelRequested = true;
    }

    @Override
    void finished() {
        onEnd.accept(this);
    }

    @Override
    void execute() {
        if (resumeAfter != null) {
            lastSeq = resumeAfter;
            everOpened = true;
            lastProblem = "re-attaching after a restart";
            recover(Outcome.TRUNCATED, true);
            return;
        }
        String session = request.runtimeSessionId();
        Opened opened = open(post(session));
        RemoteError error = opened.error();
        if (error != null && error.status() == 410 && session != null) {
            log.info("Run {}: the Bridge no longer has session {}; starting a new one", runId, session);
            emit(new AgentStreamEvent.StatusUpdate(runId + ":status:session", "warn",
                    "The agent's previous session was not found (the Bridge may have restarted); "
                            + "this turn starts a new session without the earlier context."));
            opened = open(post(null));
            error = opened.error();
        }
        if (opened.stopped()) {
            return;
        }
        if (error != null) {
            emit(new AgentStreamEvent.RunFailed(error.runCode(), error.message()));
            return;
        }
        IOException failure = opened.failure();
        if (failure != null) {
            if (opened.unreachable()) {
                emit(new AgentStreamEvent.RunFailed(ErrorCode.RUNTIME_UNAVAILABLE.name(),
                        "cannot reach the Hermes Bridge at " + http.where() + ": " + http.describe(failure)));
                return;
            }
            lastProblem = http.describe(failure);
            recover(Outcome.BROKEN, false);
            return;
        }
        recover(consume(opened), false);
    }

    private Request post(@Nullable String session) {
        ObjectNode payload = body.deepCopy();
        if (session != null) {
            payload.put("sessionId", session);
        } else {
            payload.putNull("sessionId");
        }
        return http.request(http.url("run")).header("Accept", "text/event-stream").post(http.jsonBody(payload)).build();
    }

    /** Follows broken streams by re-attaching until the run's end, the subscriber's leaving, or giving up. */
    private void recover(Outcome outcome, boolean immediate) {
        int failures = 0;
        Outcome last = outcome;
        while (last == Outcome.BROKEN || last == Outcome.TRUNCATED || last == Outcome.STALLED) {
            if (failures >= reattachAttempts) {
                giveUp(last, failures);
                return;
            }
            if (!(immediate && failures == 0)) {
                long factor = 1L << Math.min(failures, 6);
                if (!pause(reattachBackoff.multipliedBy(factor))) {
                    return;
                }
            }
            failures++;
            HermesHttp.Probe probe = http.probe(http.request(http.url("runs", runId)).get().build());
            if (probe == null) {
                lastProblem = "the Bridge did not answer the run status check";
                continue;
            }
            if (probe.status() == 404 || probe.status() == 410) {
                emit(new AgentStreamEvent.RunFailed(everOpened ? HermesErrors.STREAM_LOST : ErrorCode.RUNTIME_UNAVAILABLE.name(),
                        (everOpened ? "the stream from the Hermes Bridge was lost (" + lastProblem + ")"
                                : "the Hermes Bridge did not take the run (" + lastProblem + ")")
                                + " and the Bridge no longer knows run " + runId));
                return;
            }
            if (probe.status() >= 300) {
                lastProblem = "the run status check answered HTTP " + probe.status();
                continue;
            }
            log.info("Run {}: re-attaching to the Bridge after seq {} ({})", runId, lastSeq, lastProblem);
            HttpUrl events = http.url("runs", runId, "events").newBuilder()
                    .addQueryParameter("after", Long.toString(lastSeq)).build();
            Opened opened = open(http.request(events).header("Accept", "text/event-stream").get().build());
            if (opened.stopped()) {
                return;
            }
            if (opened.error() != null) {
                lastProblem = "re-attaching answered " + opened.error().code();
                continue;
            }
            if (opened.failure() != null) {
                lastProblem = http.describe(opened.failure());
                continue;
            }
            long before = lastSeq;
            last = consume(opened);
            if (lastSeq > before) {
                failures = 0;
            }
        }
    }

    private void giveUp(Outcome outcome, int attempts) {
        String tried = attempts == 0 ? "" : "; re-attaching failed " + attempts + (attempts == 1 ? " time" : " times");
        String code;
        String message;
        if (!everOpened) {
            code = ErrorCode.RUNTIME_UNAVAILABLE.name();
            message = "the Hermes Bridge at " + http.where() + " did not answer the run request (" + lastProblem + ")";
        } else if (outcome == Outcome.STALLED) {
            code = HermesErrors.STREAM_STALLED;
            message = "the Hermes Bridge sent neither an event nor a heartbeat within the idle timeout";
        } else if (outcome == Outcome.TRUNCATED) {
            code = HermesErrors.STREAM_LOST;
            message = "the Hermes Bridge closed the stream without its final frame (" + lastProblem + ")";
        } else {
            code = HermesErrors.STREAM_LOST;
            message = "the connection to the Hermes Bridge broke mid-stream (" + lastProblem + ")";
        }
        emit(new AgentStreamEvent.RunFailed(code, message + tried));
        cancelQuietly();
    }

    /** Tells the Bridge to stop a run this side gave up on, so its session is not left busy. */
    private void cancelQuietly() {
        HermesHttp.Probe ignored = http.probe(http.request(http.url("runs", runId, "cancel"))
                .post(http.jsonBody(http.json().createObjectNode())).build());
        if (ignored == null) {
            log.debug("Run {}: the best-effort cancel did not reach the Bridge", runId);
        }
    }

    private Outcome consume(Opened opened) {
        everOpened = true;
        started = true;
        if (cancelRequested) {
            cancelQuietly();
        }
        SseReader.Ending ending = read(opened, this::onFrame);
        if (isTerminal()) {
            return Outcome.DONE;
        }
        if (isStopped()) {
            return Outcome.STOPPED;
        }
        Throwable failure = ending.failure();
        if (protocolError == null && failure != null && !(failure instanceof IOException)) {
            protocolError = failure instanceof IllegalStateException && failure.getMessage() != null
                    ? "the Bridge did not answer with an event stream (" + failure.getMessage() + ")"
                    : "the stream could not be read (" + failure.getClass().getSimpleName() + ")";
        }
        if (protocolError != null) {
            emit(new AgentStreamEvent.RunFailed(HermesErrors.PROTOCOL_ERROR, protocolError));
            cancelQuietly();
            return Outcome.DONE;
        }
        if (failure == null) {
            lastProblem = "the stream ended after seq " + lastSeq + " without done";
            return Outcome.TRUNCATED;
        }
        lastProblem = http.describe(failure);
        return isStall(failure) ? Outcome.STALLED : Outcome.BROKEN;
    }

    // ------------------------------------------------------------------ frames

    private boolean onFrame(@Nullable String id, @Nullable String type, String data) {
        DeltaFrame delta = readDelta(data);
        JsonNode frame = null;
        long seq;
        String kind;
        if (delta != null) {
            seq = delta.seq();
            kind = delta.kind();
        } else {
            try {
                frame = http.json().readTree(data);
            } catch (IOException e) {
                protocolError = "a frame after seq " + lastSeq + " is not JSON";
                return false;
            }
            if (frame == null || !frame.isObject()) {
                protocolError = "a frame after seq " + lastSeq + " is not a JSON object";
                return false;
            }
            seq = frame.path("seq").asLong(0);
            kind = text(frame, "kind");
        }
        if (seq <= 0 && id != null) {
            try {
                seq = Long.parseLong(id.trim());
            } catch (NumberFormatException e) {
                seq = 0;
            }
        }
        if (seq <= 0) {
            protocolError = "a frame after seq " + lastSeq + " has no seq";
            return false;
        }
        if (seq <= lastSeq) {
            return true;
        }
        if (seq != lastSeq + 1 && lastSeq > 0) {
            log.warn("Run {}: frames {} to {} are missing from the Bridge stream", runId, lastSeq + 1, seq - 1);
        }
        if (kind == null) {
            kind = type == null ? "" : type;
        }
        boolean more = delta != null ? onDelta(delta, seq) : map(kind, frame, seq);
        lastSeq = seq;
        return more && !isTerminal();
    }

    /**
     * A {@code text_delta} or {@code thinking} frame: {@code seq}, {@code kind} and {@code text} (if any)
     * read straight off the parser's tokens. Most of a stream is these; building a tree for each cost a
     * quarter of the stream thread's time in the bench.
     */
    private record DeltaFrame(long seq, String kind, @Nullable String text) {
    }

    /**
     * Reads a delta frame without building a tree, or returns null for anything else (another kind, a
     * nested value, a field of an unexpected type, malformed JSON), which is then read as a tree, with the
     * same result and the same errors as before.
     */
    private @Nullable DeltaFrame readDelta(String data) {
        try (JsonParser parser = http.json().createParser(data)) {
            if (parser.nextToken() != JsonToken.START_OBJECT) {
                return null;
            }
            long seq = 0;
            String kind = null;
            String text = null;
            JsonToken token;
            while ((token = parser.nextToken()) == JsonToken.FIELD_NAME) {
                String name = parser.currentName();
                JsonToken value = parser.nextToken();
                if (value == null || value.isStructStart()) {
                    return null;
                }
                switch (name) {
                    case "seq":
                        if (value != JsonToken.VALUE_NUMBER_INT) {
                            return null;
                        }
                        seq = parser.getLongValue();
                        break;
                    case "kind":
                    case "text":
                        if (value != JsonToken.VALUE_STRING) {
                            return null;
                        }
                        if (name.equals("kind")) {
                            kind = parser.getText();
                        } else {
                            text = parser.getText();
                        }
                        break;
                    default:
                        break;
                }
            }
            if (token != JsonToken.END_OBJECT || !("text_delta".equals(kind) || "thinking".equals(kind))) {
                return null;
            }
            return new DeltaFrame(seq, kind, text);
        } catch (IOException e) {
            return null;
        }
    }

    private boolean onDelta(DeltaFrame delta, long seq) {
        String text = orElse(delta.text(), "");
        return delta.kind().equals("thinking") ? onThinking(text, seq) : onTextDelta(text);
    }

    private boolean onThinking(String text, long seq) {
        if (thinkingId == null) {
            thinkingId = runId + ":thinking:" + seq;
        }
        return emit(new AgentStreamEvent.ThinkingDelta(thinkingId, clean(text)));
    }

    private boolean onTextDelta(String text) {
        thinkingId = null;
        return emit(new AgentStreamEvent.TextDelta(request.assistantMessageId(), clean(text)));
    }

    private boolean map(String kind, JsonNode f, long seq) {
        switch (kind) {
            case "run_started": {
                started = true;
                String session = text(f, "hermesSessionId");
                if (session != null) {
                    reportedSession = session;
                    return emit(new AgentStreamEvent.RuntimeSession(session, f.path("resumedSession").asBoolean(false)));
                }
                return true;
            }
            case "session_rotated": {
                String session = text(f, "hermesSessionId");
                if (session != null && !session.equals(reportedSession)) {
                    reportedSession = session;
                    return emit(new AgentStreamEvent.RuntimeSession(session, true));
                }
                return true;
            }
            case "status":
                return emit(new AgentStreamEvent.StatusUpdate(runId + ":status:" + seq, orElse(text(f, "level"), "info"),
                        clean(orElse(text(f, "text"), ""))));
            case "thinking":
                return onThinking(orElse(text(f, "text"), ""), seq);
            case "text_delta":
                return onTextDelta(orElse(text(f, "text"), ""));
            case "tool_call":
                return onToolCall(f);
            case "tool_result": {
                thinkingId = null;
                String callId = text(f, "toolCallId");
                if (callId == null) {
                    protocolError = "tool_result frame " + seq + " has no toolCallId";
                    return false;
                }
                if (hostCallIds.contains(callId)) {
                    return true;
                }
                return emit(new AgentStreamEvent.ToolCallResult(runId + ":result:" + callId, callId,
                        clean(resultText(f.get("result"))), f.path("isError").asBoolean(false)));
            }
            case "todo_update":
                return emit(new AgentStreamEvent.TodosUpdated(runId + ":todo", todos(f.path("todos"))));
            case "clarify_request":
                return onClarify(f, seq);
            case "clarify_resolved": {
                String clarifyId = text(f, "clarifyId");
                if (clarifyId != null && "cancelled".equalsIgnoreCase(text(f, "outcome"))) {
                    return emit(new AgentStreamEvent.ClarifyResolved(clarifyId, AgentStreamEvent.ClarifyOutcome.CANCELLED,
                            List.of()));
                }
                return true;
            }
            case "usage": {
                long in = Math.max(0, f.path("inputTokens").asLong(0));
                long out = Math.max(0, f.path("outputTokens").asLong(0));
                long total = Math.max(0, f.path("totalTokens").asLong(in + out));
                return emit(new AgentStreamEvent.Usage(in, out, total));
            }
            case "final":
                return emit(new AgentStreamEvent.TextFinal(request.assistantMessageId(), clean(orElse(text(f, "text"), ""))));
            case "error":
                return emit(new AgentStreamEvent.RunFailed(orElse(text(f, "code"), ErrorCode.RUNTIME_FAILED.name()),
                        clean(orElse(text(f, "message"), "the agent failed"))));
            case "done":
                return onDone(f);
            default:
                log.debug("Run {}: ignoring a Bridge frame of unknown kind {}", runId, kind);
                return true;
        }
    }

    private boolean onToolCall(JsonNode f) {
        thinkingId = null;
        String callId = text(f, "toolCallId");
        String name = text(f, "toolName");
        if (callId == null || name == null) {
            protocolError = "a tool_call frame has no toolCallId or toolName";
            return false;
        }
        JsonNode args = f.get("args");
        String arguments = args == null || args.isNull() ? "{}" : args.isTextual() ? args.asText() : args.toString();
        boolean host = hostToolNames.contains(name);
        if (!emit(new AgentStreamEvent.ToolCallStart(runId + ":tool:" + callId, callId, name, clean(arguments)))) {
            return false;
        }
        if (host) {
            hostCallIds.add(callId);
            return emit(new AgentStreamEvent.ToolCallEnd(callId));
        }
        return true;
    }

    private boolean onClarify(JsonNode f, long seq) {
        thinkingId = null;
        String clarifyId = text(f, "clarifyId");
        if (clarifyId == null) {
            protocolError = "clarify_request frame " + seq + " has no clarifyId";
            return false;
        }
        List<String> choices = new ArrayList<>();
        for (JsonNode choice : f.path("choices")) {
            if (choice.isTextual()) {
                choices.add(clean(choice.asText()));
            }
        }
        return emit(new AgentStreamEvent.ClarifyRequested(runId + ":clarify:" + clarifyId, clarifyId,
                clean(orElse(text(f, "question"), "")), choices, f.path("multiSelect").asBoolean(false),
                Long.toString(seq)));
    }

    private boolean onDone(JsonNode f) {
        String session = text(f, "hermesSessionId");
        if (session != null && !session.equals(reportedSession)) {
            reportedSession = session;
            emit(new AgentStreamEvent.RuntimeSession(session, true));
        }
        String status = orElse(text(f, "status"), "").toLowerCase(Locale.ROOT);
        switch (status) {
            case "completed":
                emit(new AgentStreamEvent.RunFinished(dev.parley.chat.model.RunStatus.SUCCEEDED, null));
                break;
            case "cancelled":
                emit(new AgentStreamEvent.RunFinished(dev.parley.chat.model.RunStatus.CANCELLED, "cancelled"));
                break;
            case "failed":
                emit(new AgentStreamEvent.RunFailed(ErrorCode.RUNTIME_FAILED.name(),
                        "the Hermes Bridge reported the run failed without saying why"));
                break;
            default:
                emit(new AgentStreamEvent.RunFailed(HermesErrors.PROTOCOL_ERROR,
                        "the done frame has an unknown status: " + clean(status)));
        }
        return false;
    }

    private static List<TodoItem> todos(JsonNode list) {
        List<TodoItem> items = new ArrayList<>();
        for (JsonNode item : list) {
            String id = text(item, "id");
            if (id == null) {
                continue;
            }
            items.add(new TodoItem(id, orElse(text(item, "content"), ""), todoStatus(text(item, "status")),
                    text(item, "parent")));
        }
        return items;
    }

    static TodoStatus todoStatus(@Nullable String status) {
        if (status == null) {
            return TodoStatus.PENDING;
        }
        switch (status.toLowerCase(Locale.ROOT)) {
            case "in_progress":
                return TodoStatus.IN_PROGRESS;
            case "completed":
                return TodoStatus.COMPLETED;
            case "cancelled":
                return TodoStatus.CANCELLED;
            default:
                return TodoStatus.PENDING;
        }
    }

    private static String resultText(@Nullable JsonNode result) {
        if (result == null || result.isNull()) {
            return "";
        }
        return result.isTextual() ? result.asText() : result.toString();
    }

    static @Nullable String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() || value.isContainerNode() ? null : value.asText();
    }

    static String orElse(@Nullable String value, String fallback) {
        return value == null ? fallback : value;
    }
}
