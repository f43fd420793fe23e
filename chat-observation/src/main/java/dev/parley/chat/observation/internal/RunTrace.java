package dev.parley.chat.observation.internal;

import static dev.parley.chat.observation.ParleyObservations.*;

import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.ClientToolRequest;
import dev.parley.chat.input.InputRequest;
import dev.parley.chat.model.Run;
import dev.parley.chat.observation.ObservationSettings;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.observation.transport.ReceiverContext;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * One run's observations: the run's own, and its open tool calls and waits (children of the run, a wait a
 * child of the tool call it is about when there is one). Synchronized: events come from the run's threads
 * and the engine's.
 */
final class RunTrace {
    private final ObservationRegistry registry;
    private final ObservationSettings settings;
    private final Observation run;
    private boolean started;
    private boolean stopped;
    /** Open tool calls by execution id, and their kind and message id. */
    private final Map<String, Tool> tools = new LinkedHashMap<>();
    private final Map<String, Observation> waits = new LinkedHashMap<>();

    private record Tool(Observation observation, String name, String messageId, StringBuilder arguments) {
    }

    /**
     * @param parent the observation the run's is a child of, or null
     * @param startHeaders for a run followed again after a restart or a takeover: the trace headers kept when it
     *     was started (empty for none); the run's observation continues that trace, through the registry's
     *     receiver handler (a consumer span)
     */
    RunTrace(ObservationRegistry registry, ObservationSettings settings, Run run, @Nullable Observation parent,
            Map<String, String> startHeaders) {
        this.registry = registry;
        this.settings = settings;
        this.run = (startHeaders.isEmpty() ? Observation.createNotStarted(RUN, registry)
                : Observation.createNotStarted(RUN, () -> continuing(startHeaders), registry))
                .contextualName("invoke_agent parley")
                .parentObservation(parent)
                .lowCardinalityKeyValue(OPERATION, "invoke_agent")
                .lowCardinalityKeyValue(AGENT_NAME, "parley")
                .lowCardinalityKeyValue(RUNTIME, settings.runtime())
                .lowCardinalityKeyValue(REQUEST_MODEL, run.modelId() != null ? run.modelId() : UNKNOWN)
                .highCardinalityKeyValue(RUN_ID, run.id())
                .highCardinalityKeyValue(THREAD_ID, run.threadId())
                .highCardinalityKeyValue(CONVERSATION_ID, run.threadId());
        if (settings.includeContent()) {
            this.run.highCardinalityKeyValue(RUN_INPUT, run.input());
        }
    }

    private static ReceiverContext<Map<String, String>> continuing(Map<String, String> startHeaders) {
        ReceiverContext<Map<String, String>> context = new ReceiverContext<>((carrier, key) -> carrier.get(key));
        context.setCarrier(startHeaders);
        return context;
    }

    Observation observation() {
        return run;
    }

    /** Starts the run's observation unless it started already. */
    synchronized void start() {
        if (!started) {
            started = true;
            run.start();
        }
    }

    synchronized void toolStarted(String executionId, String messageId, String name, String arguments) {
        if (stopped || tools.containsKey(executionId)) {
            return;
        }
        Observation tool = Observation.createNotStarted(TOOL_CALL, registry)
                .contextualName("execute_tool " + name)
                .parentObservation(run)
                .lowCardinalityKeyValue(OPERATION, "execute_tool")
                .lowCardinalityKeyValue(TOOL_NAME, name)
                .lowCardinalityKeyValue(TOOL_KIND, settings.hostActions().contains(name) ? "host" : "runtime")
                .highCardinalityKeyValue(TOOL_CALL_ID, executionId)
                .start();
        tools.put(executionId, new Tool(tool, name, messageId, new StringBuilder(arguments)));
    }

    synchronized void toolArguments(String executionId, String delta) {
        Tool tool = tools.get(executionId);
        if (tool != null && settings.includeContent()) {
            tool.arguments().append(delta);
        }
    }

    synchronized void toolFinished(String executionId, String result, boolean error) {
        Tool tool = tools.remove(executionId);
        if (tool == null) {
            return;
        }
        Observation observation = tool.observation();
        observation.lowCardinalityKeyValue(OUTCOME, error ? "error" : "success");
        if (error) {
            observation.lowCardinalityKeyValue(ERROR_TYPE, "tool_error");
        }
        if (settings.includeContent()) {
            observation.highCardinalityKeyValue(TOOL_ARGUMENTS, tool.arguments().toString())
                    .highCardinalityKeyValue(TOOL_RESULT, result);
        }
        observation.stop();
    }

    synchronized void inputRequested(String inputId, String messageId, InputRequest request) {
        if (stopped || waits.containsKey(inputId)) {
            return;
        }
        Tool about = toolFor(messageId, request);
        if (about != null && request instanceof ClientToolRequest) {
            about.observation().lowCardinalityKeyValue(TOOL_KIND, "client");
        }
        String kind = request.kind().name().toLowerCase(Locale.ROOT);
        Observation wait = Observation.createNotStarted(INPUT_WAIT, registry)
                .contextualName("await_input " + kind)
                .parentObservation(about != null ? about.observation() : run)
                .lowCardinalityKeyValue(INPUT_KIND, kind)
                .highCardinalityKeyValue(INPUT_ID, inputId)
                .start();
        waits.put(inputId, wait);
    }

    synchronized void inputResolved(String inputId, String outcome) {
        Observation wait = waits.remove(inputId);
        if (wait != null) {
            wait.lowCardinalityKeyValue(OUTCOME, outcome.toLowerCase(Locale.ROOT)).stop();
        }
    }

    /** The tool call an input is about: the same message, the client tool's execution, or the approval's tool. */
    private @Nullable Tool toolFor(String messageId, InputRequest request) {
        if (request instanceof ClientToolRequest client && tools.containsKey(client.executionId())) {
            return tools.get(client.executionId());
        }
        Tool byName = null;
        for (Tool tool : tools.values()) {
            if (tool.messageId().equals(messageId)) {
                return tool;
            }
            if (request instanceof ApprovalRequest approval && tool.name().equals(approval.toolName())) {
                byName = tool;
            }
        }
        return byName;
    }

    /** Ends the run's observation and whatever is still open under it. */
    synchronized void finished(Run ended, @Nullable Throwable failure) {
        if (stopped) {
            return;
        }
        start();
        stopped = true;
        String status = ended.status().name();
        waits.values().forEach(wait -> wait.lowCardinalityKeyValue(OUTCOME, "run_ended").stop());
        tools.values().forEach(tool -> tool.observation().lowCardinalityKeyValue(OUTCOME, "run_ended").stop());
        waits.clear();
        tools.clear();
        run.lowCardinalityKeyValue(STATUS, status)
                .lowCardinalityKeyValue(OUTCOME, status.toLowerCase(Locale.ROOT));
        if (ended.usage() != null) {
            run.highCardinalityKeyValue(INPUT_TOKENS, Long.toString(ended.usage().inputTokens()))
                    .highCardinalityKeyValue(OUTPUT_TOKENS, Long.toString(ended.usage().outputTokens()));
        }
        if (failure != null) {
            run.lowCardinalityKeyValue(ERROR_TYPE, ended.error() != null ? ended.error().code() : "run_failed");
            run.error(failure);
        }
        run.stop();
    }
}
