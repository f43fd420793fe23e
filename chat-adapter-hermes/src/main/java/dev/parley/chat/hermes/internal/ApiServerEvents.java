package dev.parley.chat.hermes.internal;

import static dev.parley.chat.hermes.internal.BridgeRun.orElse;
import static dev.parley.chat.hermes.internal.BridgeRun.text;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.RunRequest;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Maps one run's API-server events to Parley events, saying only what the stream knows
 * ({@code docs/hermes-bridge-protocol.md}, part 2): text deltas; tool steps with their name, preview,
 * duration and failure but no output (the stream carries none); approvals and clarify questions as pending
 * inputs ({@link ApiServerInputs}); the end. {@code reasoning.available} carries the start of the
 * assistant's own message, not reasoning, and is not shown. Lives on the run's stream thread.
 */
final class ApiServerEvents {
    private static final Logger log = LoggerFactory.getLogger(ApiServerEvents.class);
    /** What a finished tool step says instead of output. */
    static final String NO_OUTPUT = "Hermes' API server does not send tool output";

    private final String runId;
    private final String assistantMessageId;
    private final ObjectMapper json;
    private final Redactor redactor;
    private final ApiServerInputs inputs;
    private final boolean clarify;
    private final Predicate<AgentStreamEvent> emit;
    private final Map<String, Deque<String>> openTools = new HashMap<>();
    private final Deque<String> openOrder = new ArrayDeque<>();
    private int toolCounter;
    private int stepCounter;
    private @Nullable String thinkingId;

    /**
     * @param clarify whether the server has clarify questions (advertised, or pinned); without, its clarify
     *     events are not used: no answer could be sent
     * @param emit hands an event on; false once the stream is over
     */
    ApiServerEvents(RunRequest request, ObjectMapper json, Redactor redactor, ApiServerInputs inputs, boolean clarify,
            Predicate<AgentStreamEvent> emit) {
        this.runId = request.runId();
        this.assistantMessageId = request.assistantMessageId();
        this.json = json;
        this.redactor = redactor;
        this.inputs = inputs;
        this.clarify = clarify;
        this.emit = emit;
    }

    /** Maps one event; false to stop reading (the run ended, or the subscriber left). */
    boolean onEvent(String name, JsonNode e) {
        for (AgentStreamEvent expired : inputs.sweep()) {
            if (!emit.test(expired)) {
                return false;
            }
        }
        switch (name) {
            case "message.delta": {
                String delta = orElse(text(e, "delta"), "");
                if (inputs.swallows(delta)) {
                    log.debug("Run {}: dropping a clarify prompt or notice written as text", runId);
                    return true;
                }
                thinkingId = null;
                return emit.test(new AgentStreamEvent.TextDelta(assistantMessageId, clean(delta)));
            }
            case "message.interim":
                if (e.path("already_streamed").asBoolean(false)) {
                    return true;
                }
                return emit.test(new AgentStreamEvent.StatusUpdate(nextStep("status"), "interim",
                        clean(orElse(text(e, "text"), ""))));
            case "reasoning.delta":
                if (thinkingId == null) {
                    thinkingId = nextStep("thinking");
                }
                return emit.test(new AgentStreamEvent.ThinkingDelta(thinkingId,
                        clean(orElse(text(e, "delta"), orElse(text(e, "text"), "")))));
            case "reasoning.available":
                log.debug("Run {}: reasoning.available holds the assistant's message text, not reasoning; not shown", runId);
                return true;
            case "tool.started":
                return onToolStarted(e);
            case "tool.completed":
                return onToolCompleted(e);
            case "approval.request":
                thinkingId = null;
                return emit.test(inputs.approvalRequested(e, orElse(text(e, "tool"), openOrder.isEmpty()
                        ? BridgeApprovals.DEFAULT_TOOL : openOrder.peekLast())));
            case "approval.responded":
                return emitAll(inputs.approvalResponded(e));
            case "clarify.request": {
                if (!clarify) {
                    log.warn("Run {}: Hermes asks a clarify question but does not advertise answering one; not shown",
                            runId);
                    return true;
                }
                thinkingId = null;
                AgentStreamEvent ask = inputs.clarifyRequested(e);
                return ask == null || emit.test(ask);
            }
            case "clarify.retired": {
                AgentStreamEvent resolved = clarify ? inputs.clarifyRetired(e) : null;
                return resolved == null || emit.test(resolved);
            }
            case "subagent.start":
                return emit.test(new AgentStreamEvent.StatusUpdate(nextStep("status"), "subagent",
                        clean("Subagent started: " + orElse(text(e, "goal"), orElse(text(e, "preview"), "")))));
            case "subagent.complete":
                return emit.test(new AgentStreamEvent.StatusUpdate(nextStep("status"), "subagent",
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

    private boolean emitAll(List<AgentStreamEvent> events) {
        for (AgentStreamEvent event : events) {
            if (!emit.test(event)) {
                return false;
            }
        }
        return true;
    }

    private String clean(String text) {
        return redactor.redact(text);
    }

    private String nextStep(String kind) {
        return runId + ":" + kind + ":" + (++stepCounter);
    }

    /** A tool began: its name and Hermes' short human preview (no arguments, no call id: they are not sent). */
    private boolean onToolStarted(JsonNode e) {
        thinkingId = null;
        String tool = orElse(text(e, "tool"), "tool");
        String executionId = "call-" + (++toolCounter);
        openTools.computeIfAbsent(tool, k -> new ArrayDeque<>()).addLast(executionId);
        openOrder.addLast(tool);
        String preview = text(e, "preview");
        String arguments = preview == null ? "{}" : json.createObjectNode().put("preview", preview).toString();
        return emit.test(new AgentStreamEvent.ToolCallStart(runId + ":tool:" + executionId, executionId, tool,
                clean(arguments)));
    }

    /**
     * A tool ended: the oldest open call of that name (the stream has no call ids) is done or failed, and its
     * result says how long it took and that there is no output to show.
     */
    private boolean onToolCompleted(JsonNode e) {
        thinkingId = null;
        String tool = orElse(text(e, "tool"), "tool");
        Deque<String> open = openTools.get(tool);
        String executionId = open == null || open.isEmpty() ? null : open.pollFirst();
        openOrder.removeFirstOccurrence(tool);
        if (executionId == null) {
            executionId = "call-" + (++toolCounter);
            if (!emit.test(new AgentStreamEvent.ToolCallStart(runId + ":tool:" + executionId, executionId, tool, "{}"))) {
                return false;
            }
        }
        boolean failed = e.path("error").asBoolean(false);
        JsonNode duration = e.path("duration");
        String took = duration.isNumber() ? duration.decimalValue().stripTrailingZeros().toPlainString() + " s" : null;
        String note = (failed ? "failed" : "finished") + (took == null ? "" : (failed ? " after " : " in ") + took)
                + "; " + NO_OUTPUT;
        return emit.test(new AgentStreamEvent.ToolCallResult(runId + ":result:" + executionId, executionId, note, failed));
    }

    /** Maps a terminal event, or a terminal run status object named {@code run.<status>}. */
    void terminal(String name, JsonNode e) {
        String output = text(e, "output");
        String error = text(e, "error");
        if (output != null && !(name.equals("run.failed") && error != null)) {
            emit.test(new AgentStreamEvent.TextFinal(assistantMessageId, clean(output)));
        }
        JsonNode usage = e.path("usage");
        if (usage.isObject()) {
            long in = Math.max(0, usage.path("input_tokens").asLong(0));
            long out = Math.max(0, usage.path("output_tokens").asLong(0));
            emit.test(new AgentStreamEvent.Usage(in, out, Math.max(0, usage.path("total_tokens").asLong(in + out))));
        }
        switch (name) {
            case "run.completed":
                emit.test(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
                break;
            case "run.cancelled":
                emit.test(new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "stopped"));
                break;
            case "run.interrupted":
                emit.test(new AgentStreamEvent.RunFinished(RunStatus.INTERRUPTED,
                        clean(orElse(error, "the Hermes gateway stopped while the run was active"))));
                break;
            default:
                emit.test(new AgentStreamEvent.RunFailed(ErrorCode.RUNTIME_FAILED.name(),
                        clean(orElse(error, "the Hermes run failed without saying why"))));
        }
    }
}
