package dev.parley.chat.hermes.internal;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.hermes.HermesErrors;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.TodoStatus;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.StreamPublisher;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import okhttp3.HttpUrl;
import okhttp3.Request;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run over the Bridge protocol v1: {@code POST /run}, mapping each frame to events ({@link BridgeFrames}),
 * sending the conversation ({@link BridgeHistory}) when there is no session to continue and the question's files
 * ({@link BridgeAttachments}, to a Bridge that takes them, else the run fails before it is sent), retrying once without
 * the session but with the conversation on {@code 410 SESSION_NOT_FOUND}, and re-attaching with
 * {@code GET /runs/{id}/events?after=N} when the stream breaks before {@code done}, and after a host restart
 * from the resume token it reported ({@link BridgeFrames#resumeToken()}, after every frame). See
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
    private final BridgeFrames.@Nullable Token resumeAfter;
    private final int reattachAttempts;
    private final Duration reattachBackoff;
    private final BridgeFrames frames;
    private final Consumer<BridgeRun> onEnd;

    private volatile boolean started;
    private volatile boolean cancelRequested;
    private boolean everOpened;
    private boolean historySent;
    private @Nullable ArrayNode attachments;
    private String lastProblem = "";
    /** The resume token reported last (none reported yet: null). */
    private @Nullable String reportedToken;

    /**
     * @param body the {@code POST /run} body without {@code sessionId} (added here)
     * @param resumeAfter null to start the run; else the resume token to re-attach after (a restarted host)
     * @throws IllegalArgumentException if {@code resumeAfter} is not a Bridge resume token
     */
    public BridgeRun(HermesHttp http, RunRequest request, Redactor redactor, ObjectNode body, @Nullable String resumeAfter,
            int reattachAttempts, Duration reattachBackoff, StreamPublisher.Emitter<AgentStreamEvent> emitter,
            Consumer<BridgeRun> onEnd) {
        super(http, request, redactor, emitter);
        this.body = body;
        this.resumeAfter = resumeAfter == null ? null : BridgeFrames.Token.parse(resumeAfter);
        this.reattachAttempts = reattachAttempts;
        this.reattachBackoff = reattachBackoff;
        this.onEnd = onEnd;
        this.frames = new BridgeFrames(request, http.json(), redactor, this::emit);
    }

    public String runId() {
        return runId;
    }

    /**
     * Checks a resume token before a re-attachment: the seq of the last frame handled, as the stream reported
     * it ({@code 17}, or {@code 17;thinking=12} while a thinking block was open), or an input's token.
     *
     * @throws ChatException INVALID_INPUT for anything else
     */
    public static void requireResumeToken(String resumeToken) {
        try {
            BridgeFrames.Token.parse(resumeToken);
        } catch (IllegalArgumentException e) {
            throw ChatException.invalidInput(e.getMessage());
        }
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

    /**
     * The host expired approval {@code approvalId} (and logged it); the Bridge's own report of that
     * expiry is not passed on again. Any thread.
     */
    public void expiredByHost(String approvalId) {
        frames.expiredByHost(approvalId);
    }

    @Override
    void finished() {
        onEnd.accept(this);
    }

    @Override
    void execute() {
        if (resumeAfter != null) {
            frames.resumeAfter(resumeAfter);
            everOpened = true;
            lastProblem = "re-attaching after a restart";
            recover(Outcome.TRUNCATED, true);
            return;
        }
        try {
            attachments = new BridgeAttachments(http).field(request);
        } catch (ChatException e) {
            emit(new AgentStreamEvent.RunFailed(e.code().name(), redactor.redact(String.valueOf(e.getMessage()))));
            return;
        }
        String session = request.runtimeSessionId();
        Request first = post(session, session == null);
        if (first == null) {
            return;
        }
        Opened opened = open(first);
        RemoteError error = opened.error();
        if (error != null && error.status() == 410 && session != null) {
            log.info("Run {}: the Bridge no longer has session {}; starting a new one from the conversation", runId,
                    session);
            Request again = post(null, true);
            if (again == null) {
                return;
            }
            if (!historySent) {
                emit(new AgentStreamEvent.StatusUpdate(runId + ":status:session", "warn",
                        "The agent's previous session was not found (the Bridge may have restarted); "
                                + "this turn starts a new session without the earlier context."));
            }
            opened = open(again);
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

    /**
     * The {@code POST /run} request; with {@code withHistory} the thread's conversation goes along (read from
     * the store now, only when there is one to send). Null if reading it failed (a {@code RunFailed} went out).
     */
    private @Nullable Request post(@Nullable String session, boolean withHistory) {
        ObjectNode payload = body.deepCopy();
        if (session != null) {
            payload.put("sessionId", session);
        } else {
            payload.putNull("sessionId");
        }
        if (attachments != null) {
            payload.set("attachments", attachments);
        }
        if (withHistory) {
            List<Message> history;
            try {
                history = request.history().messages();
            } catch (ChatException e) {
                emit(new AgentStreamEvent.RunFailed(e.code().name(), "could not read the conversation: " + e.getMessage()));
                return null;
            }
            if (!history.isEmpty()) {
                payload.set("history", BridgeHistory.entries(history, http.json(), redactor));
                historySent = true;
            }
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
            if ((probe.status() == 404 || probe.status() == 410) && resumeAfter != null
                    && frames.lastSeq() == resumeAfter.seq()) {
                emit(new AgentStreamEvent.RunFinished(RunStatus.INTERRUPTED, "the host stopped while the run was "
                        + "active, and the Hermes Bridge no longer knows run " + runId));
                return;
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
            long before = frames.lastSeq();
            log.info("Run {}: re-attaching to the Bridge after seq {} ({})", runId, before, lastProblem);
            HttpUrl events = http.url("runs", runId, "events").newBuilder()
                    .addQueryParameter("after", Long.toString(before)).build();
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
            last = consume(opened);
            if (frames.lastSeq() > before) {
                failures = 0;
            }
        }
    }

    /** Reports the mapping's resume token after the frames handled, when it changed. */
    private void reportPosition() {
        String token = frames.resumeToken();
        if (!token.equals(reportedToken)) {
            reportedToken = token;
            resumePoint(token);
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
        reportPosition();
        SseReader.Ending ending = read(opened, (id, type, data) -> {
            boolean more = frames.onFrame(id, type, data);
            reportPosition();
            return more && !isTerminal();
        });
        if (isTerminal()) {
            return Outcome.DONE;
        }
        if (isStopped()) {
            return Outcome.STOPPED;
        }
        Throwable failure = ending.failure();
        String protocolError = frames.protocolError();
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
            lastProblem = "the stream ended after seq " + frames.lastSeq() + " without done";
            return Outcome.TRUNCATED;
        }
        lastProblem = http.describe(failure);
        return isStall(failure) ? Outcome.STALLED : Outcome.BROKEN;
    }

    // ------------------------------------------------------------------ JSON helpers (also used by ApiServerRun)

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

    static @Nullable String text(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() || value.isContainerNode() ? null : value.asText();
    }

    static String orElse(@Nullable String value, String fallback) {
        return value == null ? fallback : value;
    }
}
