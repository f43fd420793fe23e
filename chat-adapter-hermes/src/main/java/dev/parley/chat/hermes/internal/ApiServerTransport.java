package dev.parley.chat.hermes.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.hermes.HermesModel;
import dev.parley.chat.runtime.ApprovalReply;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.runtime.ModelOption;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.RuntimeHealth;
import dev.parley.chat.runtime.StreamPublisher;
import java.util.Collections;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.Flow;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The API-server side of {@code HermesRuntimeAdapter}: its runs, what it knows about the server
 * ({@link ApiServerInfo}) and the calls the engine makes for them. Thread-safe.
 */
public final class ApiServerTransport {
    private static final Logger log = LoggerFactory.getLogger(ApiServerTransport.class);
    private static final int RECENTLY_ENDED = 256;

    private final HermesHttp http;
    private final HermesConfig config;
    private final Executor workers;
    private final ApiServerInfo info;
    private final Map<String, ApiServerRun> runs = new ConcurrentHashMap<>();
    private final Set<String> ended = Collections.newSetFromMap(Collections.synchronizedMap(
            new LinkedHashMap<String, Boolean>(16, 0.75f, false) {
                @Override
                protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                    return size() > RECENTLY_ENDED;
                }
            }));

    public ApiServerTransport(HermesHttp http, HermesConfig config, Executor workers) {
        this.http = http;
        this.config = config;
        this.workers = workers;
        this.info = new ApiServerInfo(http, config);
    }

    /** A cold publisher of one run; the server is read (if not known) on the run's own thread. */
    public Flow.Publisher<AgentStreamEvent> start(RunRequest request, @Nullable HermesModel model,
            @Nullable String systemPrompt, Redactor redactor) {
        return StreamPublisher.create(emitter -> {
            ApiServerRun run = new ApiServerRun(http, request, redactor, info, model, systemPrompt,
                    config.reattachAttempts(), config.reattachBackoff(), config.apiServerApprovalTimeout(), emitter,
                    r -> {
                        ended.add(r.runId());
                        runs.remove(r.runId(), r);
                    });
            runs.put(request.runId(), run);
            workers.execute(run);
        });
    }

    /**
     * APPROVALS and CANCEL, and CLARIFY where the server has clarify questions (as last read; before the
     * first contact, as pinned).
     */
    public Set<Capability> capabilities() {
        ApiServerProfile known = info.known();
        ApiServerProfile server = known != null ? known : ApiServerProfile.unknown(config);
        EnumSet<Capability> capabilities = EnumSet.of(Capability.CANCEL);
        if (server.hasApprovals()) {
            capabilities.add(Capability.APPROVALS);
        }
        if (server.hasClarify()) {
            capabilities.add(Capability.CLARIFY);
        }
        return Set.copyOf(capabilities);
    }

    /** Images only (PNG, JPEG, GIF, WebP), sent as data URLs with the question; see {@link ApiServerRequests}. */
    public AttachmentSupport attachmentSupport() {
        return ApiServerRequests.ATTACHMENTS;
    }

    public void answerApproval(ApprovalReply reply) {
        run(reply.runId()).answer(reply);
    }

    public void answerClarify(ClarifyReply reply) {
        run(reply.runId()).answer(reply);
    }

    /** Nothing is sent: Hermes times approvals out itself (see {@link ApiServerInputs}). Never throws. */
    public void inputExpired(String runId, String inputId) {
        ApiServerRun run = runs.get(runId);
        if (run != null) {
            run.expired(inputId);
        }
    }

    /**
     * Stops a run. A run that ended here already is left as it ended (its stream told the engine how);
     * one that ended on the server only is not an error either.
     *
     * @throws ChatException NOT_FOUND for a run this adapter never ran (or forgot)
     */
    public void cancel(String runId) {
        ApiServerRun run = runs.get(runId);
        if (run == null) {
            if (ended.contains(runId)) {
                log.debug("Run {}: already ended; nothing to stop", runId);
                return;
            }
            throw ChatException.notFound("run", runId);
        }
        run.cancel();
    }

    /**
     * Stops a run this adapter may not know any more (its host restarted): by its own handle if it runs here,
     * else by the Hermes run id its stream reported as its resume token. A run that ended is no error.
     */
    public void stopOrphan(String runId, @Nullable String hermesRunId) {
        ApiServerRun run = runs.get(runId);
        if (run != null) {
            run.cancel();
            return;
        }
        if (hermesRunId == null) {
            log.warn("Run {}: its Hermes run id was never stored; it cannot be stopped on the API server", runId);
            return;
        }
        ApiServerRun.stop(http, runId, hermesRunId);
    }

    /** {@code GET /health}, read afresh, with what the server said about itself. Never throws. */
    public RuntimeHealth health() {
        String what = "Hermes API server at " + http.where();
        HermesHttp.Probe probe;
        try {
            probe = http.probe(http.request(http.url("health")).get().build());
        } catch (RuntimeException e) {
            return RuntimeHealth.down(what + ": the health check failed");
        }
        if (probe == null) {
            info.invalidate();
            return RuntimeHealth.down(what + " is unreachable");
        }
        if (probe.status() != 200) {
            info.invalidate();
            return RuntimeHealth.down(what + " answered HTTP " + probe.status());
        }
        return RuntimeHealth.up(what + " is up (" + http.redactor().redact(info.get().describe()) + ")");
    }

    /** The host's models, else the server's own ({@code /v1/models}). */
    public List<ModelOption> models() {
        List<ModelOption> configured = config.modelResolver().models();
        return configured.isEmpty() ? info.get().models() : configured;
    }

    /** Closes every run's connection without stopping the runs. */
    public void abandonAll() {
        runs.values().forEach(ApiServerRun::abandon);
    }

    private ApiServerRun run(String runId) {
        ApiServerRun run = runs.get(runId);
        if (run == null) {
            throw ChatException.notFound("run", runId);
        }
        return run;
    }
}
