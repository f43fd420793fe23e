package dev.parley.chat.hermes;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.hermes.internal.ApiServerTransport;
import dev.parley.chat.hermes.internal.BridgeApprovals;
import dev.parley.chat.hermes.internal.BridgeAttachments;
import dev.parley.chat.hermes.internal.BridgeHistory;
import dev.parley.chat.hermes.internal.BridgeRun;
import dev.parley.chat.hermes.internal.HermesHttp;
import dev.parley.chat.hermes.internal.Redactor;
import dev.parley.chat.runtime.ApprovalReply;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.ModelOption;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.RunThreads;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.runtime.RuntimeHealth;
import dev.parley.chat.runtime.SkillOption;
import dev.parley.chat.runtime.StreamPublisher;
import dev.parley.chat.runtime.ToolResult;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Flow;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Drives Hermes Agent over HTTP: through a Hermes Bridge speaking the Bridge protocol v1
 * ({@link HermesTransport#BRIDGE}, {@code docs/hermes-bridge-protocol.md}) or through Hermes' own API
 * server ({@link HermesTransport#API_SERVER}). Configure it with {@link HermesConfig}.
 *
 * <h2>Streams</h2>
 * Each {@link #generateResponse} publisher is cold and single-use; on subscription one worker thread
 * ({@link RunThreads} named {@code parley-hermes-stream-N}: a virtual thread on Java 21+, so that a run waiting
 * days for an answer holds no platform thread; a platform thread on 17) opens the HTTP stream, maps every
 * frame to {@link AgentStreamEvent}s and hands them to the subscriber at the pace it requests (a slow
 * subscriber slows the socket down, up to {@link StreamPublisher#DEFAULT_CAPACITY} events ahead). The stream
 * ends with exactly one {@link AgentStreamEvent.RunFinished} or {@link AgentStreamEvent.RunFailed}, then
 * {@code onComplete};
 * every failure (runtime unreachable, an error status, a malformed frame, a broken or stalled stream)
 * is such a {@code RunFailed}, and the events already emitted stay. Cancelling the subscription closes
 * the HTTP connection but does not stop the run on the runtime (disconnect is not stop); {@link #cancel}
 * does.
 *
 * <h2>Message ids</h2>
 * Text goes to {@link RunRequest#assistantMessageId()}; other messages get ids derived from the run id:
 * {@code runId:thinking:<seq>}, {@code runId:tool:<toolCallId>}, {@code runId:result:<toolCallId>},
 * {@code runId:todo}, {@code runId:status:<seq>}, {@code runId:clarify:<clarifyId>},
 * {@code runId:approval:<approvalId>}. A new thinking message starts after each tool call, tool result,
 * clarify question, approval or answer text.
 *
 * <h2>Capabilities</h2>
 * BRIDGE: CLARIFY, APPROVALS (Hermes' command approvals as {@code InputRequested} with an
 * {@link dev.parley.chat.input.ApprovalRequest}), CANCEL, HOST_TOOLS, REATTACH. API_SERVER: APPROVALS,
 * CANCEL, and CLARIFY where the server advertises clarify questions; which behaviours of the server are
 * used (how a thread's memory is kept, whether a start is retried) it reads from the server itself, see
 * {@link HermesConfig}. Attachments ({@link #attachmentSupport()}): images on the API server; on the Bridge what
 * {@link HermesConfig#bridgeAttachments()} declares (any file by default), sent to a Bridge that takes them.
 *
 * <h2>Threading and errors</h2>
 * Thread-safe; share one instance and {@link #close()} it on shutdown. Control calls ({@link #answerClarify},
 * {@link #answerApproval}, {@link #inputExpired}, {@link #cancel}, {@link #submitToolResult}) block for at
 * most the request timeout and throw {@link ChatException}: {@code RUNTIME_UNAVAILABLE} when the runtime
 * cannot be reached, {@code NOT_FOUND}, {@code CONFLICT} or {@code INVALID_INPUT} as the runtime answers,
 * {@code UNSUPPORTED} for what the transport cannot do ({@link #inputExpired} never throws on the Bridge).
 * Bearer tokens and model API keys never appear in messages, logs or events.
 */
public final class HermesRuntimeAdapter implements RuntimeAdapter, AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HermesRuntimeAdapter.class);
    private static final Set<Capability> BRIDGE_CAPABILITIES = Set.copyOf(EnumSet.of(Capability.CLARIFY,
            Capability.APPROVALS, Capability.CANCEL, Capability.HOST_TOOLS, Capability.REATTACH));
    /** The protocol a Bridge must report on {@code GET /health}. */
    public static final String BRIDGE_PROTOCOL = "hermes-bridge/1";

    private final HermesConfig config;
    private final HermesHttp http;
    private final ExecutorService workers;
    private final Map<String, BridgeRun> bridgeRuns = new ConcurrentHashMap<>();
    private final ApiServerTransport apiServer;
    private volatile boolean closed;

    /** An adapter for this configuration; it opens no connection until the first call. */
    public HermesRuntimeAdapter(HermesConfig config) {
        this.config = Objects.requireNonNull(config, "config");
        this.http = new HermesHttp(config.baseUrl(), config.bearerToken(), config.httpClient(), config.connectTimeout(),
                config.idleTimeout(), config.requestTimeout());
        this.workers = RunThreads.executor("parley-hermes-stream");
        UnaryOperator<Runnable> decorator = config.taskDecorator();
        this.apiServer = new ApiServerTransport(http, config, task -> workers.execute(decorator.apply(task)));
    }

    /** The configuration this adapter runs with. */
    public HermesConfig config() {
        return config;
    }

    /**
     * {@inheritDoc}
     *
     * @throws ChatException INVALID_INPUT for an unknown model or skill; {@code UNSUPPORTED} after close
     */
    @Override
    public Flow.Publisher<AgentStreamEvent> generateResponse(RunRequest request) {
        return start(request, null);
    }

    /** {@inheritDoc} Hermes has no notion of a regeneration; it is a new turn with the same message. */
    @Override
    public Flow.Publisher<AgentStreamEvent> retry(RunRequest request) {
        return start(request, null);
    }

    /**
     * {@inheritDoc} Bridge only: {@code resumeToken} names the frame the stream continues after — the seq of
     * the last frame the stream reported handled ({@code 17}, or {@code 17;thinking=12} while a thinking block
     * was open, so that its next frames join the same thinking message), or the seq of the clarify or approval
     * request a run waits on. The stream follows {@code GET /runs/{id}/events?after=<seq>}; a run the Bridge no
     * longer knows ends {@code RunFinished(INTERRUPTED)}.
     *
     * @throws ChatException UNSUPPORTED on the API server transport; INVALID_INPUT for a token that is not a seq
     */
    @Override
    public Flow.Publisher<AgentStreamEvent> reattach(RunRequest request, String resumeToken) {
        if (config.transport() != HermesTransport.BRIDGE) {
            throw ChatException.unsupported("Hermes' API server cannot replay a run's events; re-attaching needs a Bridge");
        }
        BridgeRun.requireResumeToken(resumeToken);
        return start(request, resumeToken);
    }

    private Flow.Publisher<AgentStreamEvent> start(RunRequest request, @Nullable String resumeAfter) {
        Objects.requireNonNull(request, "request");
        if (closed) {
            throw ChatException.unsupported("the Hermes adapter is closed");
        }
        HermesModel model = request.modelId() == null ? null : config.modelResolver().resolve(request.modelId())
                .orElseThrow(() -> ChatException.invalidInput("unknown model: " + request.modelId()));
        String systemPrompt = request.skill() == null ? null : config.skillResolver().systemPrompt(request.skill());
        Redactor redactor = http.redactor().with(model == null ? null : model.apiKey());
        if (config.transport() == HermesTransport.BRIDGE) {
            ObjectNode body = bridgeBody(request, model, systemPrompt);
            return StreamPublisher.create(emitter -> {
                BridgeRun run = new BridgeRun(http, request, redactor, body, resumeAfter, config.reattachAttempts(),
                        config.reattachBackoff(), emitter, r -> bridgeRuns.remove(r.runId(), r));
                bridgeRuns.put(request.runId(), run);
                workers.execute(config.taskDecorator().apply(run));
            });
        }
        return apiServer.start(request, model, systemPrompt, redactor);
    }

    private ObjectNode bridgeBody(RunRequest request, @Nullable HermesModel model, @Nullable String systemPrompt) {
        ObjectMapper json = http.json();
        ObjectNode body = json.createObjectNode();
        body.put("runId", request.runId());
        body.put("threadId", request.conversationKey());
        body.put("systemPrompt", systemPrompt);
        body.put("userMessage", request.userMessage());
        body.put("maxIterations", request.maxIterations() != null ? request.maxIterations() : config.defaultMaxIterations());
        if (model != null) {
            ObjectNode modelConfig = body.putObject("modelConfig");
            modelConfig.put("model", model.name());
            modelConfig.put("provider", model.provider());
            modelConfig.put("baseUrl", model.baseUrl());
            modelConfig.put("apiKey", model.apiKey());
        }
        if (!request.hostTools().isEmpty()) {
            ArrayNode tools = body.putArray("hostTools");
            for (HostToolSpec tool : request.hostTools()) {
                ObjectNode spec = tools.addObject().put("name", tool.name()).put("description", tool.description());
                try {
                    spec.set("parameters", json.readTree(tool.parametersSchema()));
                } catch (Exception e) {
                    throw ChatException.invalidInput("host tool " + tool.name() + " has a parameters schema that is not JSON");
                }
            }
        }
        body.putArray("clientCapabilities").add(BridgeApprovals.CLIENT_CAPABILITY).add(BridgeHistory.CLIENT_CAPABILITY);
        if (!request.context().isEmpty()) {
            body.set("context", json.valueToTree(request.context()));
        }
        return body;
    }

    @Override
    public Set<Capability> capabilities() {
        return config.transport() == HermesTransport.BRIDGE ? BRIDGE_CAPABILITIES : apiServer.capabilities();
    }

    /**
     * API server: images only (PNG, JPEG, GIF, WebP). Those of the question go to Hermes as {@code image_url} parts
     * of data URLs on the request's last input item, the only one Hermes hands its agent as parts; an earlier
     * message's files are named in its history text ({@code [image: cat.png]}). A start whose images make it
     * larger than the 10 MB Hermes reads fails its run (TOO_LARGE). Bridge: {@link HermesConfig#bridgeAttachments()}
     * (default: any file). The question's files go in {@code POST /run} (Base64), after {@code GET /health} showed
     * that the Bridge takes them; one that does not take attachments, the type, the number or the bytes fails the
     * run before it is sent (UNSUPPORTED, INVALID_INPUT, TOO_LARGE), naming its limit. An earlier message's files are
     * named in the history text.
     */
    @Override
    public AttachmentSupport attachmentSupport() {
        return config.transport() == HermesTransport.BRIDGE ? config.bridgeAttachments() : apiServer.attachmentSupport();
    }

    /**
     * Bridge: {@code POST /runs/{runId}/clarify}, idempotent on the Bridge's side (the same answer again
     * is accepted once). API server: {@code POST /v1/runs/{id}/clarify {clarify_id, response}} (newer Hermes
     * versions only; a multi-select answer is a JSON array inside the string, as Hermes reads it).
     *
     * @throws ChatException NOT_FOUND if the run or question is unknown, CONFLICT if it no longer waits
     *     or took another answer
     */
    @Override
    public void answerClarify(ClarifyReply reply) {
        Objects.requireNonNull(reply, "reply");
        if (config.transport() == HermesTransport.BRIDGE) {
            ObjectNode body = http.json().createObjectNode().put("clarifyId", reply.clarifyId());
            ArrayNode answer = body.putArray("answer");
            reply.answer().forEach(answer::add);
            http.call(http.request(http.url("runs", reply.runId(), "clarify")).post(http.jsonBody(body)).build(),
                    "answering the clarify question");
            return;
        }
        apiServer.answerClarify(reply);
    }

    /**
     * Hands the decision to Hermes with its name for it (once, session, always, deny). Bridge:
     * {@code POST /runs/{runId}/approval}, idempotent on the Bridge's side (the same decision again is
     * accepted once). API server: {@code POST /v1/runs/{id}/approval {choice}} (with the request's
     * {@code request_id} where the server gave one); without one Hermes resolves the run's oldest pending
     * approval, so only the oldest may be decided (a later one is CONFLICT until it is). A 0.19.17 request's
     * {@code approval_id} is the input's id, but its decision still goes oldest first.
     *
     * @throws ChatException INVALID_INPUT for edited arguments (Hermes runs the command it asked about or
     *     none) or a decision Hermes did not offer; NOT_FOUND for an unknown run or approval; CONFLICT if the
     *     approval took another decision, expired or was withdrawn, or (API server) an earlier one waits
     */
    @Override
    public void answerApproval(ApprovalReply reply) {
        Objects.requireNonNull(reply, "reply");
        if (reply.editedArguments() != null) {
            throw ChatException.invalidInput("Hermes cannot run an edited command; allow or deny the one it asked about");
        }
        if (config.transport() != HermesTransport.BRIDGE) {
            apiServer.answerApproval(reply);
            return;
        }
        ObjectNode body = http.json().createObjectNode().put("approvalId", reply.inputId())
                .put("decision", BridgeApprovals.choice(reply.decision()));
        http.call(http.request(http.url("runs", reply.runId(), "approval")).post(http.jsonBody(body)).build(),
                "handing the approval decision to the Bridge");
    }

    /**
     * Bridge: {@code POST /runs/{runId}/approval/expire}, so that Hermes stops waiting now rather than at its
     * own timeout (the deadline the engine enforces is the Bridge's {@code expiresAt}, so the two differ only
     * by the clocks' skew). Best effort: never throws; a failure is logged and the Bridge's own timeout ends
     * the wait. The Bridge's report of this expiry is not passed on (the engine logged it). Bridge clarify
     * questions have no deadline, so the engine never expires one. API server: nothing is sent and nothing
     * is thrown. Hermes times the approval out on its own ({@code approvals.timeout}, which the deadline is
     * derived from, so Hermes has given up or is about to) and has no call to expire one; sending
     * {@code deny} instead could, without approval ids, land on a later approval. The run goes on as Hermes
     * decides.
     */
    @Override
    public void inputExpired(String runId, String inputId) {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(inputId, "inputId");
        if (config.transport() != HermesTransport.BRIDGE) {
            apiServer.inputExpired(runId, inputId);
            return;
        }
        BridgeRun local = bridgeRuns.get(runId);
        if (local != null) {
            local.expiredByHost(inputId);
        }
        try {
            http.call(http.request(http.url("runs", runId, "approval", "expire"))
                    .post(http.jsonBody(http.json().createObjectNode().put("approvalId", inputId))).build(),
                    "expiring the approval");
        } catch (RuntimeException e) {
            if (e instanceof ChatException && ((ChatException) e).code() == ErrorCode.CONFLICT) {
                log.debug("Run {}: approval {} was no longer pending on the Bridge: {}", runId, inputId, e.getMessage());
            } else {
                log.warn("Run {}: could not tell the Bridge that approval {} expired; its own timeout ends the wait: {}",
                        runId, inputId, e.getMessage());
            }
        }
    }

    /**
     * Bridge: {@code POST /runs/{runId}/cancel}; the stream then ends {@code done{cancelled}}, a pending
     * clarify or approval is withdrawn. API server: {@code POST /v1/runs/{id}/stop}; a run that already
     * ended (on the server, or here) is not an error, and its stream ends with its real end state. A cancel
     * that arrives before the runtime confirmed the run is sent again as soon as it does.
     *
     * @throws ChatException NOT_FOUND if the runtime does not know the run
     */
    @Override
    public void cancel(String runId) {
        Objects.requireNonNull(runId, "runId");
        if (config.transport() == HermesTransport.BRIDGE) {
            BridgeRun local = bridgeRuns.get(runId);
            if (local != null) {
                local.cancelRequested();
            }
            try {
                http.call(http.request(http.url("runs", runId, "cancel")).post(http.jsonBody(http.json().createObjectNode()))
                        .build(), "cancelling the run");
            } catch (ChatException e) {
                if (e.code() != ErrorCode.NOT_FOUND || local == null || local.started()) {
                    throw e;
                }
            }
            return;
        }
        apiServer.cancel(runId);
    }

    /**
     * {@inheritDoc} Bridge: {@code POST /runs/{runId}/cancel} (a run the Bridge no longer knows is no error).
     * API server: {@code POST /v1/runs/{id}/stop}, the Hermes run id being the token the run's stream
     * reported; a run whose stream never got that far cannot be named, and is left (logged).
     */
    @Override
    public void stopOrphan(String runId, @Nullable String resumeToken) {
        Objects.requireNonNull(runId, "runId");
        if (config.transport() == HermesTransport.BRIDGE) {
            RuntimeAdapter.super.stopOrphan(runId, resumeToken);
            return;
        }
        apiServer.stopOrphan(runId, resumeToken);
    }

    /**
     * {@inheritDoc} On a Bridge, {@code DELETE /threads/{conversationKey}}: the Bridge removes the
     * conversation's working directory, its "session" approvals and sessions. A Bridge without that route
     * (404) keeps them; that is logged. Hermes' API server keeps nothing per conversation beyond its sessions,
     * which it keys by session id: nothing to do there.
     *
     * @throws ChatException RUNTIME_UNAVAILABLE when the Bridge cannot be reached, or as it answers
     */
    @Override
    public void threadDeleted(String conversationKey) {
        Objects.requireNonNull(conversationKey, "conversationKey");
        if (config.transport() != HermesTransport.BRIDGE) {
            return;
        }
        try {
            http.call(http.request(http.url("threads", conversationKey)).delete().build(), "forgetting the thread");
        } catch (ChatException e) {
            if (e.code() != ErrorCode.NOT_FOUND) {
                throw e;
            }
            log.info("The Bridge has no DELETE /threads (an older Bridge): it keeps the deleted conversation's files"
                    + " and approvals");
        }
    }

    /**
     * Bridge only: {@code POST /runs/{runId}/tool-result}; idempotent on the Bridge's side.
     *
     * @throws ChatException UNSUPPORTED on the API server transport; NOT_FOUND, CONFLICT as the Bridge answers
     */
    @Override
    public void submitToolResult(ToolResult result) {
        Objects.requireNonNull(result, "result");
        if (config.transport() != HermesTransport.BRIDGE) {
            throw ChatException.unsupported("Hermes' API server cannot call host tools");
        }
        ObjectNode body = http.json().createObjectNode().put("toolCallId", result.executionId())
                .put("result", result.result()).put("isError", result.error());
        http.call(http.request(http.url("runs", result.runId(), "tool-result")).post(http.jsonBody(body)).build(),
                "handing the tool result to the Bridge");
    }

    /**
     * {@code GET /health}; the Bridge must also speak {@value #BRIDGE_PROTOCOL}; the API server's answer
     * says its version and the behaviours chosen from it. Never throws.
     */
    @Override
    public RuntimeHealth health() {
        if (config.transport() != HermesTransport.BRIDGE) {
            return apiServer.health();
        }
        String what = "Hermes Bridge";
        HermesHttp.Probe probe;
        try {
            probe = http.probe(http.request(http.url("health")).get().build());
        } catch (RuntimeException e) {
            return RuntimeHealth.down(what + " at " + http.where() + ": the health check failed");
        }
        if (probe == null) {
            return RuntimeHealth.down(what + " at " + http.where() + " is unreachable");
        }
        if (probe.status() != 200) {
            return RuntimeHealth.down(what + " at " + http.where() + " answered HTTP " + probe.status());
        }
        JsonNode protocol = probe.json().path("protocol");
        if (!BRIDGE_PROTOCOL.equals(protocol.asText())) {
            return RuntimeHealth.down(what + " at " + http.where() + " speaks "
                    + (protocol.isMissingNode() ? "an unknown protocol" : http.redactor().redact(protocol.asText()))
                    + ", not " + BRIDGE_PROTOCOL);
        }
        BridgeAttachments.Offer files = BridgeAttachments.offer(probe.json());
        String attachments = files != null ? "; attachments: " + files.describe()
                : config.bridgeAttachments().mediaTypes().isEmpty() ? ""
                : "; it takes no attachments, so messages with files fail (see HermesConfig.bridgeAttachments)";
        return RuntimeHealth.up(what + " at " + http.where() + " is up (" + BRIDGE_PROTOCOL + ", "
                + probe.json().path("activeRuns").asInt(0) + " active runs" + attachments + ")");
    }

    /** The host's models; on the API server, when the host lists none, the server's own. */
    @Override
    public List<ModelOption> models() {
        return config.transport() == HermesTransport.BRIDGE ? config.modelResolver().models() : apiServer.models();
    }

    @Override
    public List<SkillOption> skills() {
        return config.skillResolver().skills();
    }

    /** True: the skill resolver lists every skill it takes, so the engine refuses others before storing. */
    @Override
    public boolean offersOnlyListedSkills() {
        return true;
    }

    /**
     * Closes every open connection without ending the streams or cancelling the runs (they go on in the
     * runtime, and a restarted host re-attaches to those waiting for an answer), stops the worker threads
     * and, unless the host gave its own client, the HTTP client. Close the engine first. Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        bridgeRuns.values().forEach(BridgeRun::abandon);
        apiServer.abandonAll();
        workers.shutdownNow();
        http.close();
    }

    @Override
    public String toString() {
        return "HermesRuntimeAdapter[" + config + "]";
    }
}
