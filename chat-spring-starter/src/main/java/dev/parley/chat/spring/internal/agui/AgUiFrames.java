package dev.parley.chat.spring.internal.agui;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.AgentStreamEvent.InputRequested;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.ClientToolRequest;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.spring.internal.SseFrames;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Turns one Parley run's events into one AG-UI response: {@code RUN_STARTED} and a {@code MESSAGES_SNAPSHOT}
 * first, then text, reasoning, tool calls, state and custom events, and one final {@code RUN_FINISHED} (with
 * an interrupt outcome when the run waits for the person) or {@code RUN_ERROR}. Every START it sends is closed
 * before the end, and no id is started twice in a response. Only the event forms that {@code @ag-ui/client}
 * 1.0 and 0.0.59 both accept are written: reasoning as {@code REASONING_*}, a plain success without outcome.
 *
 * <p>The events are those of the whole run, from its first: an input the run asked before this request
 * ({@code seq <= planSeq}) is an interrupt again only if it was still pending then and this request did not
 * answer it. The response ends at the end of a burst of events in which the run waits for an open input.
 *
 * <p>Not thread-safe: one {@link dev.parley.chat.spring.internal.SseFrames} caller at a time (the stream's lock).
 */
final class AgUiFrames implements SseFrames {
    private final String threadId;
    private final String runId;
    private final String assistantMessageId;
    private final ArrayNode snapshot;
    private final ObjectNode state;
    private final long planSeq;
    private final Set<String> stillPending;
    private final Set<String> answeredNow;
    private final boolean cancelExpected;
    private final Runnable onClientLeft;

    private final Set<String> openText = new LinkedHashSet<>();
    private final Set<String> openReasoning = new LinkedHashSet<>();
    private final Set<String> openTools = new LinkedHashSet<>();
    private final Set<String> startedIds = new LinkedHashSet<>();
    /** Tool calls started in this stream that have no result yet. */
    private final Set<String> unresolvedTools = new LinkedHashSet<>();
    private final Map<String, InputRequested> openInputs = new LinkedHashMap<>();
    private boolean stateSent;
    private @Nullable ObjectNode usage;
    private long seenSeq;
    private boolean ended;

    /**
     * @param snapshot the AG-UI messages the client should hold before this run's events
     * @param planSeq the run's newest seq when the request was planned (0 for a new run)
     * @param stillPending the inputs pending at {@code planSeq} that this request did not answer
     * @param answeredNow the inputs this request answered
     * @param cancelExpected whether a cancelled run ends as a success for this client: this request cancels it
     *     (a cancelled clarify), or the client stops runs itself (CopilotKit's stop)
     * @param onClientLeft called once if the client goes away before the last event (AG-UI's stop)
     */
    AgUiFrames(String threadId, String runId, String assistantMessageId, ArrayNode snapshot, ObjectNode state,
            long planSeq, Set<String> stillPending, Set<String> answeredNow, boolean cancelExpected,
            Runnable onClientLeft) {
        this.threadId = threadId;
        this.runId = runId;
        this.assistantMessageId = assistantMessageId;
        this.snapshot = snapshot;
        this.state = state;
        this.planSeq = planSeq;
        this.stillPending = Set.copyOf(stillPending);
        this.answeredNow = Set.copyOf(answeredNow);
        this.cancelExpected = cancelExpected;
        this.onClientLeft = onClientLeft;
    }

    /** The only frame of a request Parley refuses after reading it: a {@code RUN_ERROR}. */
    static String runError(String code, String message) {
        return frame(event("RUN_ERROR").put("message", message).put("code", code));
    }

    /**
     * The whole answer for a thread with no run going on, as a client that re-joins it needs it:
     * {@code RUN_STARTED}, the {@code MESSAGES_SNAPSHOT} and {@code RUN_FINISHED}.
     */
    static String atRest(String threadId, String runId, ArrayNode snapshot) {
        ObjectNode messages = event("MESSAGES_SNAPSHOT");
        messages.set("messages", snapshot);
        return frame(event("RUN_STARTED").put("threadId", threadId).put("runId", runId)) + frame(messages)
                + frame(event("RUN_FINISHED").put("threadId", threadId).put("runId", runId));
    }

    @Override
    public String prelude() {
        ObjectNode started = event("RUN_STARTED").put("threadId", threadId).put("runId", runId);
        ObjectNode messages = event("MESSAGES_SNAPSHOT");
        messages.set("messages", snapshot);
        return frame(started) + frame(messages);
    }

    @Override
    public String frame(RunEvent logged) {
        if (ended) {
            return "";
        }
        seenSeq = logged.seq();
        StringBuilder out = new StringBuilder();
        AgentStreamEvent event = AgentStreamEvent.current(logged.event());
        if (event instanceof AgentStreamEvent.TextDelta text) {
            closeReasoning(out);
            text(out, text.messageId(), text.delta());
        } else if (event instanceof AgentStreamEvent.TextFinal text) {
            if (!startedIds.contains(text.messageId())) {
                text(out, text.messageId(), text.text());
            }
        } else if (event instanceof AgentStreamEvent.ThinkingDelta thinking) {
            reasoning(out, thinking.messageId(), thinking.delta(), logged.seq());
        } else if (event instanceof AgentStreamEvent.ToolCallStart call) {
            toolStart(out, call, AgUiToolCallIds.of(logged.runId(), call.executionId()));
        } else if (event instanceof AgentStreamEvent.ToolCallArgs args) {
            String toolCallId = AgUiToolCallIds.of(logged.runId(), args.executionId());
            if (openTools.contains(toolCallId) && !args.delta().isEmpty()) {
                out.append(frame(event("TOOL_CALL_ARGS").put("toolCallId", toolCallId).put("delta", args.delta())));
            }
        } else if (event instanceof AgentStreamEvent.ToolCallEnd end) {
            toolEnd(out, AgUiToolCallIds.of(logged.runId(), end.executionId()));
        } else if (event instanceof AgentStreamEvent.ToolCallResult result) {
            String toolCallId = AgUiToolCallIds.of(logged.runId(), result.executionId());
            toolEnd(out, toolCallId);
            unresolvedTools.remove(toolCallId);
            out.append(frame(event("TOOL_CALL_RESULT").put("messageId", result.messageId())
                    .put("toolCallId", toolCallId).put("content", result.result()).put("role", "tool")));
        } else if (event instanceof AgentStreamEvent.TodosUpdated todos) {
            todos(out, todos);
        } else if (event instanceof AgentStreamEvent.StatusUpdate status) {
            ObjectNode value = ChatJson.shared().objectNode().put("level", status.level()).put("text", status.text());
            ObjectNode custom = event("CUSTOM").put("name", "parley.status");
            custom.set("value", value);
            out.append(frame(custom));
        } else if (event instanceof InputRequested input) {
            requested(out, input, logged);
        } else if (event instanceof AgentStreamEvent.InputResolved resolved) {
            openInputs.remove(resolved.inputId());
        } else if (event instanceof AgentStreamEvent.Usage reported) {
            usage = ChatJson.shared().objectNode().put("inputTokens", reported.inputTokens())
                    .put("outputTokens", reported.outputTokens()).put("totalTokens", reported.totalTokens());
        } else if (event instanceof AgentStreamEvent.RunFinished finished) {
            finished(out, finished);
        } else if (event instanceof AgentStreamEvent.RunFailed failed) {
            closeAll(out);
            out.append(runError(failed.code(), failed.message()));
            ended = true;
        }
        return out.toString();
    }

    @Override
    public String batchEnd() {
        if (ended || openInputs.isEmpty() || seenSeq < planSeq) {
            return "";
        }
        StringBuilder out = new StringBuilder();
        closeAll(out);
        ArrayNode interrupts = JsonNodeFactory.instance.arrayNode();
        openInputs.values().stream().filter(i -> !(i.request() instanceof ClientToolRequest))
                .forEach(i -> interrupts.add(interrupt(i)));
        ObjectNode finished = runFinished();
        if (!interrupts.isEmpty()) {
            ObjectNode outcome = finished.putObject("outcome").put("type", "interrupt");
            outcome.set("interrupts", interrupts);
        }
        out.append(frame(finished));
        ended = true;
        return out.toString();
    }

    @Override
    public String failed(Throwable error) {
        if (ended) {
            return "";
        }
        StringBuilder out = new StringBuilder();
        closeAll(out);
        out.append(runError("STREAM_FAILED", "the run's event stream failed; send the same input again to re-join the run"));
        ended = true;
        return out.toString();
    }

    @Override
    public boolean ended() {
        return ended;
    }

    @Override
    public void clientLeft() {
        onClientLeft.run();
    }

    // ------------------------------------------------------------------ mapping

    private void text(StringBuilder out, String messageId, String delta) {
        if (!openText.contains(messageId)) {
            if (!startedIds.add(messageId)) {
                return;
            }
            openText.add(messageId);
            out.append(frame(event("TEXT_MESSAGE_START").put("messageId", messageId).put("role", "assistant")));
        }
        if (!delta.isEmpty()) {
            out.append(frame(event("TEXT_MESSAGE_CONTENT").put("messageId", messageId).put("delta", delta)));
        }
    }

    /** Reasoning opens under the thinking message's id; once closed, more of it opens under a fresh id. */
    private void reasoning(StringBuilder out, String thinkingId, String delta, long seq) {
        String id = openReasoning.contains(thinkingId) ? thinkingId : null;
        if (id == null) {
            closeReasoning(out);
            id = startedIds.contains(thinkingId) ? thinkingId + ":" + seq : thinkingId;
            startedIds.add(id);
            openReasoning.add(id);
            out.append(frame(event("REASONING_START").put("messageId", id)));
            out.append(frame(event("REASONING_MESSAGE_START").put("messageId", id).put("role", "reasoning")));
        }
        if (!delta.isEmpty()) {
            out.append(frame(event("REASONING_MESSAGE_CONTENT").put("messageId", id).put("delta", delta)));
        }
    }

    /** A tool call under {@code toolCallId}, its run-qualified id (see {@link AgUiToolCallIds}). */
    private void toolStart(StringBuilder out, AgentStreamEvent.ToolCallStart call, String toolCallId) {
        closeReasoning(out);
        if (!startedIds.add(toolCallId)) {
            return;
        }
        openTools.add(toolCallId);
        unresolvedTools.add(toolCallId);
        out.append(frame(event("TOOL_CALL_START").put("toolCallId", toolCallId)
                .put("toolCallName", call.name()).put("parentMessageId", assistantMessageId)));
        if (!call.arguments().isEmpty()) {
            out.append(frame(event("TOOL_CALL_ARGS").put("toolCallId", toolCallId).put("delta", call.arguments())));
        }
    }

    private void toolEnd(StringBuilder out, String toolCallId) {
        if (openTools.remove(toolCallId)) {
            out.append(frame(event("TOOL_CALL_END").put("toolCallId", toolCallId)));
        }
    }

    /** The todo list as the state's {@code todos}: a snapshot of the client's state with it first, then deltas. */
    private void todos(StringBuilder out, AgentStreamEvent.TodosUpdated todos) {
        JsonNode items = ChatJson.shared().readTree(ChatJson.shared().write(todos.items()));
        if (!stateSent) {
            stateSent = true;
            state.set("todos", items);
            ObjectNode snapshotEvent = event("STATE_SNAPSHOT");
            snapshotEvent.set("snapshot", state);
            out.append(frame(snapshotEvent));
        } else {
            ObjectNode delta = event("STATE_DELTA");
            ObjectNode add = delta.putArray("delta").addObject().put("op", "add").put("path", "/todos");
            add.set("value", items);
            out.append(frame(delta));
        }
    }

    private void requested(StringBuilder out, InputRequested input, RunEvent logged) {
        String id = input.inputId();
        boolean settled = answeredNow.contains(id) || (logged.seq() <= planSeq && !stillPending.contains(id));
        if (input.request() instanceof ClientToolRequest tool) {
            toolEnd(out, AgUiToolCallIds.of(logged.runId(), tool.executionId()));
        }
        if (!settled) {
            openInputs.put(id, input);
        }
    }

    private void finished(StringBuilder out, AgentStreamEvent.RunFinished finished) {
        closeAll(out);
        if (finished.status() == RunStatus.CANCELLED && cancelExpected) {
            for (String toolCallId : unresolvedTools) {
                out.append(frame(unfinishedToolResult(toolCallId, RunStatus.CANCELLED)));
            }
            unresolvedTools.clear();
        }
        if (finished.status() == RunStatus.SUCCEEDED || (finished.status() == RunStatus.CANCELLED && cancelExpected)) {
            out.append(frame(runFinished()));
        } else {
            String reason = finished.reason() == null ? "the run was " + finished.status().name().toLowerCase()
                    : finished.reason();
            out.append(runError(finished.status().name(), reason));
        }
        ended = true;
    }

    /**
     * The result a tool call that never got one shows once its run has ended, as CopilotKit's own runtime
     * closes it: a {@code TOOL_CALL_RESULT} (role {@code tool}, id {@code <toolCallId>-result}) whose content
     * says the run was stopped ({@code {"status": "stopped", "reason": "stop_requested", …}}) or ended
     * otherwise ({@code {"status": "error", …}}). Without it a client shows the call as running for good, and a
     * model given the messages again would find a call without its result.
     */
    static ObjectNode unfinishedToolResult(String toolCallId, RunStatus runEnd) {
        return event("TOOL_CALL_RESULT").put("messageId", unfinishedResultId(toolCallId)).put("toolCallId", toolCallId)
                .put("content", unfinishedToolContent(runEnd)).put("role", "tool");
    }

    /** The message id of {@link #unfinishedToolResult}: {@code <toolCallId>-result}. */
    static String unfinishedResultId(String toolCallId) {
        return toolCallId + "-result";
    }

    /** The content of {@link #unfinishedToolResult}: why the call has no result of its own, as JSON. */
    static String unfinishedToolContent(RunStatus runEnd) {
        ObjectNode content = ChatJson.shared().objectNode();
        if (runEnd == RunStatus.CANCELLED) {
            content.put("status", "stopped").put("reason", "stop_requested").put("message", "Run stopped by user");
        } else {
            content.put("status", "error").put("reason", "run_" + runEnd.name().toLowerCase(java.util.Locale.ROOT))
                    .put("message", "The run ended (" + runEnd.name() + ") before the tool returned");
        }
        return ChatJson.shared().write(content);
    }

    private ObjectNode runFinished() {
        ObjectNode finished = event("RUN_FINISHED").put("threadId", threadId).put("runId", runId);
        if (usage != null) {
            finished.putArray("usage").add(usage);
        }
        return finished;
    }

    /**
     * An interrupt for a clarify or an approval: the input's id, the question or the call's description, and
     * a {@code responseSchema} for the payload of the {@code resume} that answers it.
     */
    private static ObjectNode interrupt(InputRequested input) {
        ObjectNode interrupt = ChatJson.shared().objectNode().put("id", input.inputId());
        ObjectNode schema = ChatJson.shared().objectNode();
        if (input.request() instanceof ClarifyRequest clarify) {
            interrupt.put("reason", "clarify").put("message", clarify.question());
            ObjectNode choice = ChatJson.shared().objectNode().put("type", "string");
            if (!clarify.choices().isEmpty()) {
                clarify.choices().forEach(choice.putArray("enum")::add);
            }
            if (clarify.multiSelect()) {
                schema.put("type", "array").set("items", choice);
            } else {
                schema.setAll(choice);
            }
        } else if (input.request() instanceof ApprovalRequest approval) {
            interrupt.put("reason", "approval").put("message", approval.description());
            schema.put("type", "object").putArray("required").add("decision");
            ObjectNode properties = schema.putObject("properties");
            ArrayNode decisions = properties.putObject("decision").put("type", "string").putArray("enum");
            approval.decisions().stream().map(ApprovalDecision::wireName).forEach(decisions::add);
            if (approval.argumentsEditable()) {
                properties.putObject("editedArguments").put("type", "string");
            }
            interrupt.putObject("metadata").put("toolName", approval.toolName()).put("arguments", approval.arguments());
        }
        interrupt.set("responseSchema", schema);
        if (input.deadline() != null) {
            interrupt.put("expiresAt", input.deadline().toString());
        }
        return interrupt;
    }

    private void closeReasoning(StringBuilder out) {
        for (String id : openReasoning) {
            out.append(frame(event("REASONING_MESSAGE_END").put("messageId", id)));
            out.append(frame(event("REASONING_END").put("messageId", id)));
        }
        openReasoning.clear();
    }

    private void closeAll(StringBuilder out) {
        closeReasoning(out);
        for (String id : openTools) {
            out.append(frame(event("TOOL_CALL_END").put("toolCallId", id)));
        }
        openTools.clear();
        for (String id : openText) {
            out.append(frame(event("TEXT_MESSAGE_END").put("messageId", id)));
        }
        openText.clear();
    }

    private static ObjectNode event(String type) {
        return ChatJson.shared().objectNode().put("type", type);
    }

    private static String frame(ObjectNode event) {
        return "data: " + ChatJson.shared().write(event) + "\n\n";
    }
}
