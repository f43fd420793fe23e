package dev.parley.chat.hermes.internal;

import static dev.parley.chat.hermes.internal.BridgeRun.orElse;
import static dev.parley.chat.hermes.internal.BridgeRun.text;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.hermes.HermesErrors;
import dev.parley.chat.hermes.HermesModel;
import dev.parley.chat.runtime.ApprovalReply;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.StreamPublisher;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Set;
import java.util.function.Consumer;
import okhttp3.Request;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run over Hermes Agent's own API server: {@code POST /v1/runs}, then {@code GET /v1/runs/{id}/events}
 * (one subscriber, no replay: when the stream breaks the run's outcome is polled from
 * {@code GET /v1/runs/{id}}). What the request holds and how the events map is in
 * {@link ApiServerRequests}, {@link ApiServerEvents} and {@code docs/hermes-bridge-protocol.md}, part 2.
 *
 * <p>A start is sent again only when it provably never reached the server (connection refused, unknown
 * host, no route), or when the server honours {@code Idempotency-Key} (the Parley run id); otherwise a
 * failed start fails the run, since a second request could start the run twice.
 */
public final class ApiServerRun extends RunLoop {
    private static final Logger log = LoggerFactory.getLogger(ApiServerRun.class);
    static final Set<String> TERMINAL = Set.of("completed", "failed", "cancelled", "interrupted");

    private final ApiServerInfo info;
    private final @Nullable HermesModel model;
    private final @Nullable String systemPrompt;
    private final int attempts;
    private final Duration backoff;
    private final Consumer<ApiServerRun> onEnd;
    private final ApiServerInputs inputs;
    private @Nullable ApiServerEvents events;

    private volatile @Nullable String hermesRunId;
    private volatile boolean cancelRequested;

    public ApiServerRun(HermesHttp http, RunRequest request, Redactor redactor, ApiServerInfo info,
            @Nullable HermesModel model, @Nullable String systemPrompt, int attempts, Duration backoff,
            Duration approvalTimeout, StreamPublisher.Emitter<AgentStreamEvent> emitter, Consumer<ApiServerRun> onEnd) {
        super(http, request, redactor, emitter);
        this.info = info;
        this.model = model;
        this.systemPrompt = systemPrompt;
        this.attempts = attempts;
        this.backoff = backoff;
        this.onEnd = onEnd;
        this.inputs = new ApiServerInputs(http, runId, redactor, approvalTimeout, Clock.systemUTC());
    }

    public String runId() {
        return runId;
    }

    @Override
    void finished() {
        onEnd.accept(this);
    }

    // ------------------------------------------------------------------ control calls

    /**
     * Stops the run ({@code POST /v1/runs/{id}/stop}), now or as soon as the server named it. A run that
     * already ended on the server is not an error (0.19 answers {@code 404}, newer servers the final status):
     * its stream brings the real end.
     */
    public void cancel() {
        cancelRequested = true;
        String remote = hermesRunId;
        if (remote != null) {
            stop(http, runId, remote);
        }
    }

    /**
     * {@code POST /v1/runs/{remote}/stop}; a run that already ended on the server is not an error.
     *
     * @throws ChatException as the server answers otherwise, RUNTIME_UNAVAILABLE when it cannot be reached
     */
    static void stop(HermesHttp http, String runId, String remote) {
        JsonNode answer;
        try {
            answer = http.call(http.request(http.url("v1", "runs", remote, "stop"))
                    .post(http.jsonBody(http.json().createObjectNode())).build(), "stopping the Hermes run");
        } catch (ChatException e) {
            if (e.code() != ErrorCode.NOT_FOUND) {
                throw e;
            }
            HermesHttp.Probe status = http.probe(http.request(http.url("v1", "runs", remote)).get().build());
            answer = status == null ? null : status.json();
            if (status == null || status.status() != 200 && status.status() != 404) {
                throw e;
            }
        }
        String status = answer == null ? null : text(answer, "status");
        if (status != null && TERMINAL.contains(status)) {
            log.info("Run {}: Hermes run {} had already ended ({}) when it was to be stopped", runId, remote, status);
        }
    }

    /** Sends an approval decision; see {@link ApiServerInputs#answerApproval}. */
    public void answer(ApprovalReply reply) {
        inputs.answerApproval(remote(reply.inputId()), reply);
    }

    /** Sends a clarify answer; see {@link ApiServerInputs#answerClarify}. */
    public void answer(ClarifyReply reply) {
        inputs.answerClarify(remote(reply.clarifyId()), reply);
    }

    /** The engine's deadline for an input passed; Hermes times it out on its own, so nothing is sent. */
    public void expired(String inputId) {
        if (inputs.expired(inputId)) {
            log.debug("Run {}: approval {} expired; Hermes' own timeout ends its wait", runId, inputId);
        }
    }

    private String remote(String inputId) {
        String remote = hermesRunId;
        if (remote == null) {
            throw ChatException.notFound("input", inputId);
        }
        return remote;
    }

    // ------------------------------------------------------------------ the run

    @Override
    void execute() {
        ApiServerProfile server = info.get();
        ApiServerEvents mapper = new ApiServerEvents(request, http.json(), redactor, inputs, server.hasClarify(),
                this::emit);
        events = mapper;
        ApiServerRequests.Start start;
        try {
            start = ApiServerRequests.start(http.json(), request, server, model, systemPrompt);
        } catch (ChatException e) {
            emit(new AgentStreamEvent.RunFailed(e.code().name(), clean(orElse(e.getMessage(), "no reason given"))));
            return;
        }
        log.debug("Run {}: starting on {} (session {}, {} history entries, {} images)", runId, server.describe(),
                start.resumed() ? "restored by Hermes" : "sent", start.historyTurns(), start.images());
        String remote = start(start, server);
        if (remote == null) {
            return;
        }
        hermesRunId = remote;
        if (!emit(new AgentStreamEvent.RuntimeSession(start.sessionId(), start.resumed()))) {
            return;
        }
        resumePoint(remote);
        if (cancelRequested) {
            try {
                stop(http, runId, remote);
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
        info.invalidate();
        poll(remote, problem, mapper);
    }

    /** Starts the run (see the class comment on retries); the server's run id, or null if the run failed. */
    private @Nullable String start(ApiServerRequests.Start start, ApiServerProfile server) {
        boolean idempotent = server.honoursIdempotencyKey();
        Request post = http.request(http.url("v1", "runs")).header("Idempotency-Key", runId)
                .post(idempotent ? http.jsonBody(start.body()) : http.oneShotJsonBody(start.body())).build();
        for (int attempt = 0; ; attempt++) {
            Opened opened = open(post);
            if (opened.stopped()) {
                return null;
            }
            RemoteError error = opened.error();
            if (error != null) {
                boolean gateway = error.status() == 502 || error.status() == 503 || error.status() == 504;
                if (gateway) {
                    info.invalidate();
                }
                if (!(gateway && idempotent && attempt < attempts)) {
                    emit(new AgentStreamEvent.RunFailed(error.runCode(), error.message()));
                    return null;
                }
            } else {
                IOException failure = opened.failure();
                boolean reached = !opened.unreachable();
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
                        reached = true;
                    }
                }
                info.invalidate();
                if (reached && !idempotent) {
                    emit(new AgentStreamEvent.RunFailed(ErrorCode.RUNTIME_UNAVAILABLE.name(), "starting the run on the "
                            + "Hermes API server at " + http.where() + " failed after the request may have reached it ("
                            + http.describe(failure) + "); it is not sent again because this server ("
                            + orElse(server.version(), "version unknown") + ") does not honour Idempotency-Key, and a "
                            + "second request could start the run twice"));
                    return null;
                }
                if (attempt >= attempts) {
                    emit(new AgentStreamEvent.RunFailed(ErrorCode.RUNTIME_UNAVAILABLE.name(), "cannot start the run on "
                            + "the Hermes API server at " + http.where() + ": " + http.describe(failure)));
                    return null;
                }
            }
            if (!pause(backoff.multipliedBy(1L << Math.min(attempt, 6)))) {
                return null;
            }
        }
    }

    /** After a lost stream: the API server cannot replay events, so wait for the outcome in the run status. */
    private void poll(String remote, String problem, ApiServerEvents mapper) {
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
                mapper.terminal("run." + status, probe.json());
                return;
            }
        }
    }

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
        ApiServerEvents mapper = events;
        return mapper != null && mapper.onEvent(name, event) && !isTerminal();
    }
}
