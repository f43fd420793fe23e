package dev.parley.chat.reduce;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.ClientToolRequest;
import dev.parley.chat.input.InputRequest;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.ApprovalMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ClarifyMessage;
import dev.parley.chat.model.ErrorInfo;
import dev.parley.chat.model.ErrorMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.StatusMessage;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.TodoMessage;
import dev.parley.chat.model.TokenUsage;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Folds one run's {@link RunEvent}s into its messages and its outcome. The rules below are the only
 * definition of what an event means; the browser client implements the same rules and both run the
 * JSON test vectors in {@code chat-core/src/test/resources/reducer-vectors}.
 *
 * <h2>Rules</h2>
 * <ol>
 *   <li>Events are applied in {@code seq} order; an event whose seq is not above the last applied one
 *       is ignored (replays are harmless). Events before {@code run_started} and every event after the
 *       terminal one are ignored, as are unknown types.</li>
 *   <li>{@code run_started} sets the thread, run and assistant message ids; the run is RUNNING.</li>
 *   <li>{@code messages} inserts or replaces each message by id; a replaced message keeps its
 *       position. A non-null {@code guardrailsFailureReason} is recorded.</li>
 *   <li>{@code text_delta} appends to the assistant message's text; {@code text_final} replaces it. An
 *       unknown id creates an IN_PROGRESS assistant message whose parent is the run's assistant
 *       message. A delta aimed at a message of another kind is ignored.</li>
 *   <li>{@code thinking_delta} appends to a thinking message, creating it (IN_PROGRESS, parent = the
 *       assistant message) when the id is new.</li>
 *   <li>{@code tool_call_start} creates an IN_PROGRESS action execution message (a repeated execution
 *       id is ignored); {@code tool_call_args} appends to its arguments; {@code tool_call_end} changes
 *       nothing; {@code tool_call_result} creates a COMPLETED result message (named after the call) and
 *       marks the call COMPLETED, or FAILED when the result is an error.</li>
 *   <li>{@code todos} creates or replaces the items of the todo message (IN_PROGRESS until the run
 *       ends); {@code status} creates or replaces a status message, COMPLETED at once.</li>
 *   <li>{@code input_requested} opens a pending input (a repeated input id is ignored) and the run is
 *       WAITING_FOR_INPUT: a clarify creates an IN_PROGRESS clarify message, an approval an IN_PROGRESS
 *       approval message (both with the event's message id); a client tool creates no message (its tool
 *       call shows it). {@code input_resolved} on a pending input closes it: a clarify takes its answer
 *       and COMPLETED when ANSWERED, else CANCELLED; an approval takes the outcome, and when ANSWERED the
 *       decision, any edited arguments and COMPLETED, else CANCELLED. The run is RUNNING again once no
 *       input is pending. {@code clarify_request} and {@code clarify_resolved} (the older form) are an
 *       {@code input_requested} and {@code input_resolved} of kind clarify whose input id is the clarify
 *       id.</li>
 *   <li>{@code usage} replaces the run's token usage and sets it on the assistant message;
 *       {@code runtime_session} records the runtime's session id.</li>
 *   <li>{@code run_finished} ends the run with its status; with {@code truncated} (the model stopped at
 *       its length limit) it also marks the run's assistant message {@code truncated}, and without it
 *       leaves the mark as it is. {@code run_failed} ends it FAILED, sets the error (with its
 *       {@code retryAfterSeconds}) on the assistant message and adds an error message (id
 *       {@code runId + ":error"}). Every message still IN_PROGRESS takes the final status: COMPLETED,
 *       FAILED, CANCELLED or INTERRUPTED. Partial text is kept.</li>
 *   <li>Messages created by events get the event's timestamp as {@code createdAt}.</li>
 * </ol>
 *
 * <p>Not thread-safe: one reducer per run, fed from one thread at a time. Text is accumulated in
 * builders, so a long answer streamed token by token costs linear time; {@link #messages()} and
 * {@link #takeChanged()} build immutable messages on demand.
 */
public final class RunReducer {

    private final Map<String, MessageSlot> slots = new LinkedHashMap<>();
    private final Map<String, String> actionByExecutionId = new HashMap<>();
    /** Every input the run asked for, by input id, in the order asked. */
    private final Map<String, InputTrack> inputs = new LinkedHashMap<>();

    private @Nullable String threadId;
    private @Nullable String runId;
    private @Nullable String assistantMessageId;
    private RunStatus status = RunStatus.QUEUED;
    private long lastSeq;
    private @Nullable ErrorInfo error;
    private @Nullable String finishReason;
    private @Nullable TokenUsage usage;
    private @Nullable String runtimeSessionId;
    private @Nullable String guardrailsFailureReason;
    private int pendingInputs;

    /** A pending input as the reducer follows it. */
    private static final class InputTrack {
        final PendingInput asked;
        boolean pending = true;
        boolean answered;

        InputTrack(PendingInput asked) {
            this.asked = asked;
        }
    }

    /** Applies one event; see the class rules. */
    public void apply(RunEvent logged) {
        if (logged.seq() <= lastSeq) {
            return;
        }
        lastSeq = logged.seq();
        AgentStreamEvent event = AgentStreamEvent.current(logged.event());
        if (event instanceof AgentStreamEvent.RunStarted) {
            if (runId == null) {
                AgentStreamEvent.RunStarted started = (AgentStreamEvent.RunStarted) event;
                threadId = started.threadId();
                runId = started.runId();
                assistantMessageId = started.assistantMessageId();
                status = RunStatus.RUNNING;
            }
            return;
        }
        if (runId == null || status.isTerminal()) {
            return;
        }
        Instant at = Instant.ofEpochMilli(logged.timestamp());
        if (event instanceof AgentStreamEvent.MessagesSnapshot) {
            onMessages((AgentStreamEvent.MessagesSnapshot) event);
        } else if (event instanceof AgentStreamEvent.TextDelta) {
            AgentStreamEvent.TextDelta delta = (AgentStreamEvent.TextDelta) event;
            MessageSlot slot = assistantSlot(delta.messageId(), at);
            if (slot != null) {
                slot.text.append(delta.delta());
                slot.touch();
            }
        } else if (event instanceof AgentStreamEvent.TextFinal) {
            AgentStreamEvent.TextFinal text = (AgentStreamEvent.TextFinal) event;
            MessageSlot slot = assistantSlot(text.messageId(), at);
            if (slot != null) {
                slot.text.setLength(0);
                slot.text.append(text.text());
                slot.touch();
            }
        } else if (event instanceof AgentStreamEvent.ThinkingDelta) {
            onThinking((AgentStreamEvent.ThinkingDelta) event, at);
        } else if (event instanceof AgentStreamEvent.ToolCallStart) {
            onToolCallStart((AgentStreamEvent.ToolCallStart) event, at);
        } else if (event instanceof AgentStreamEvent.ToolCallArgs) {
            AgentStreamEvent.ToolCallArgs args = (AgentStreamEvent.ToolCallArgs) event;
            String messageId = actionByExecutionId.get(args.executionId());
            if (messageId != null) {
                MessageSlot slot = slots.get(messageId);
                slot.text.append(args.delta());
                slot.touch();
            }
        } else if (event instanceof AgentStreamEvent.ToolCallResult) {
            onToolCallResult((AgentStreamEvent.ToolCallResult) event, at);
        } else if (event instanceof AgentStreamEvent.TodosUpdated) {
            AgentStreamEvent.TodosUpdated todos = (AgentStreamEvent.TodosUpdated) event;
            MessageSlot slot = slots.get(todos.messageId());
            Instant createdAt = slot != null ? slot.base.createdAt() : at;
            put(new TodoMessage(todos.messageId(), threadId, runId, assistantMessageId, MessageStatus.IN_PROGRESS,
                    createdAt, todos.items()));
        } else if (event instanceof AgentStreamEvent.StatusUpdate) {
            AgentStreamEvent.StatusUpdate update = (AgentStreamEvent.StatusUpdate) event;
            MessageSlot slot = slots.get(update.messageId());
            Instant createdAt = slot != null ? slot.base.createdAt() : at;
            put(new StatusMessage(update.messageId(), threadId, runId, assistantMessageId, MessageStatus.COMPLETED,
                    createdAt, update.level(), update.text()));
        } else if (event instanceof AgentStreamEvent.InputRequested requested) {
            onInputRequested(requested, at);
        } else if (event instanceof AgentStreamEvent.InputResolved resolved) {
            onInputResolved(resolved);

        } else if (event instanceof AgentStreamEvent.Usage) {
            AgentStreamEvent.Usage reported = (AgentStreamEvent.Usage) event;
            usage = new TokenUsage(reported.inputTokens(), reported.outputTokens(), reported.totalTokens());
            MessageSlot answer = assistantMessageId == null ? null : slots.get(assistantMessageId);
            if (answer != null && answer.base instanceof AssistantMessage) {
                answer.base = MessageCopies.withUsage((AssistantMessage) answer.base, usage);
                answer.touch();
            }
        } else if (event instanceof AgentStreamEvent.RuntimeSession) {
            runtimeSessionId = ((AgentStreamEvent.RuntimeSession) event).sessionId();
        } else if (event instanceof AgentStreamEvent.RunFinished) {
            AgentStreamEvent.RunFinished finished = (AgentStreamEvent.RunFinished) event;
            finishReason = finished.reason();
            if (finished.truncated()) {
                markTruncated();
            }
            finish(finished.status());
        } else if (event instanceof AgentStreamEvent.RunFailed) {
            onFailed((AgentStreamEvent.RunFailed) event, at);
        }
    }

    private void onMessages(AgentStreamEvent.MessagesSnapshot snapshot) {
        for (Message message : snapshot.messages()) {
            put(message);
            if (message instanceof ActionExecutionMessage) {
                actionByExecutionId.putIfAbsent(((ActionExecutionMessage) message).executionId(), message.id());
            } else if (message instanceof ClarifyMessage clarify) {
                track(clarify.clarifyId(), clarify.id(), new ClarifyRequest(clarify.question(), clarify.choices(),
                        clarify.multiSelect()), clarify.createdAt(), clarify.isPending());
            } else if (message instanceof ApprovalMessage approval) {
                track(approval.inputId(), approval.id(), approval.request(), approval.createdAt(), approval.isPending());
            }
        }
        countPendingInputs();
        if (snapshot.guardrailsFailureReason() != null) {
            guardrailsFailureReason = snapshot.guardrailsFailureReason();
        }
    }

    private @Nullable MessageSlot assistantSlot(String messageId, Instant at) {
        MessageSlot slot = slots.get(messageId);
        if (slot == null) {
            return put(new AssistantMessage(messageId, threadId, runId, assistantMessageId, MessageStatus.IN_PROGRESS,
                    at, "", null, null));
        }
        return slot.base instanceof AssistantMessage ? slot : null;
    }

    private void onThinking(AgentStreamEvent.ThinkingDelta delta, Instant at) {
        MessageSlot slot = slots.get(delta.messageId());
        if (slot == null) {
            slot = put(new ThinkingMessage(delta.messageId(), threadId, runId, assistantMessageId,
                    MessageStatus.IN_PROGRESS, at, ""));
        } else if (!(slot.base instanceof ThinkingMessage)) {
            return;
        }
        slot.text.append(delta.delta());
        slot.touch();
    }

    private void onToolCallStart(AgentStreamEvent.ToolCallStart start, Instant at) {
        if (actionByExecutionId.containsKey(start.executionId()) || slots.containsKey(start.messageId())) {
            return;
        }
        put(new ActionExecutionMessage(start.messageId(), threadId, runId, assistantMessageId,
                MessageStatus.IN_PROGRESS, at, start.executionId(), start.name(), start.arguments()));
        actionByExecutionId.put(start.executionId(), start.messageId());
    }

    private void onToolCallResult(AgentStreamEvent.ToolCallResult result, Instant at) {
        if (slots.containsKey(result.messageId())) {
            return;
        }
        String name = "";
        String actionId = actionByExecutionId.get(result.executionId());
        if (actionId != null) {
            MessageSlot action = slots.get(actionId);
            ActionExecutionMessage call = (ActionExecutionMessage) action.materialize();
            name = call.name();
            if (call.status() == MessageStatus.IN_PROGRESS) {
                action.base = MessageCopies.withStatus(call, result.error() ? MessageStatus.FAILED : MessageStatus.COMPLETED);
                action.touch();
            }
        }
        put(new ResultMessage(result.messageId(), threadId, runId, assistantMessageId, MessageStatus.COMPLETED, at,
                result.executionId(), name, result.result(), result.error()));
    }

    private void track(String inputId, String messageId, InputRequest request, Instant at, boolean pending) {
        InputTrack track = inputs.computeIfAbsent(inputId, id -> new InputTrack(new PendingInput(runId, id, messageId,
                request, null, null, InputState.PENDING, null, at, null)));
        track.pending = pending;
    }

    private void onInputRequested(AgentStreamEvent.InputRequested requested, Instant at) {
        if (inputs.containsKey(requested.inputId()) || slots.containsKey(requested.messageId())
                && !(requested.request() instanceof ClientToolRequest)) {
            return;
        }
        InputRequest request = requested.request();
        if (request instanceof ClarifyRequest ask) {
            put(new ClarifyMessage(requested.messageId(), threadId, runId, assistantMessageId, MessageStatus.IN_PROGRESS,
                    at, requested.inputId(), ask.question(), ask.choices(), ask.multiSelect(), List.of()));
        } else if (request instanceof ApprovalRequest ask) {
            put(new ApprovalMessage(requested.messageId(), threadId, runId, assistantMessageId,
                    MessageStatus.IN_PROGRESS, at, requested.inputId(), ask, null, null, null));
        }
        inputs.put(requested.inputId(), new InputTrack(new PendingInput(runId, requested.inputId(),
                requested.messageId(), request, requested.deadline(), requested.resumeToken(), InputState.PENDING, null,
                at, null)));
        pendingInputs++;
        status = RunStatus.WAITING_FOR_INPUT;
    }

    private void onInputResolved(AgentStreamEvent.InputResolved resolved) {
        InputTrack track = inputs.get(resolved.inputId());
        if (track == null || !track.pending) {
            return;
        }
        track.pending = false;
        boolean answered = resolved.outcome() == AgentStreamEvent.InputOutcome.ANSWERED;
        track.answered = answered;
        MessageStatus closed = answered ? MessageStatus.COMPLETED : MessageStatus.CANCELLED;
        MessageSlot slot = slots.get(track.asked.messageId());
        if (slot != null && slot.base instanceof ClarifyMessage clarify && clarify.isPending()) {
            List<String> answer = resolved.answer() instanceof ClarifyAnswer given ? given.answer() : List.of();
            slot.base = new ClarifyMessage(clarify.id(), clarify.threadId(), clarify.runId(), clarify.parentMessageId(),
                    closed, clarify.createdAt(), clarify.clarifyId(), clarify.question(), clarify.choices(),
                    clarify.multiSelect(), answered ? answer : List.of());
            slot.touch();
        } else if (slot != null && slot.base instanceof ApprovalMessage approval && approval.isPending()) {
            ApprovalAnswer decided = resolved.answer() instanceof ApprovalAnswer given ? given : null;
            slot.base = new ApprovalMessage(approval.id(), approval.threadId(), approval.runId(),
                    approval.parentMessageId(), closed, approval.createdAt(), approval.inputId(), approval.request(),
                    InputState.valueOf(resolved.outcome().name()), decided == null ? null : decided.decision(),
                    decided == null ? null : decided.editedArguments());
            slot.touch();
        }
        pendingInputs--;
        if (pendingInputs == 0 && status == RunStatus.WAITING_FOR_INPUT) {
            status = RunStatus.RUNNING;
        }
    }

    private void markTruncated() {
        MessageSlot answer = assistantMessageId == null ? null : slots.get(assistantMessageId);
        if (answer != null && answer.base instanceof AssistantMessage) {
            answer.base = MessageCopies.truncated((AssistantMessage) answer.base);
            answer.touch();
        }
    }

    private void onFailed(AgentStreamEvent.RunFailed failed, Instant at) {
        error = new ErrorInfo(failed.code(), failed.message(), failed.retryAfterSeconds());
        MessageSlot answer = assistantMessageId == null ? null : slots.get(assistantMessageId);
        if (answer != null && answer.base instanceof AssistantMessage) {
            answer.base = MessageCopies.withError((AssistantMessage) answer.base, error);
            answer.touch();
        }
        String errorId = runId + ":error";
        if (!slots.containsKey(errorId)) {
            put(new ErrorMessage(errorId, threadId, runId, assistantMessageId, MessageStatus.COMPLETED, at,
                    failed.code(), failed.message()));
        }
        finish(RunStatus.FAILED);
    }

    private void finish(RunStatus terminal) {
        status = terminal;
        pendingInputs = 0;
        inputs.values().forEach(track -> track.pending = false);
        MessageStatus finalStatus = terminal.finalMessageStatus();
        for (MessageSlot slot : slots.values()) {
            if (slot.base.status() == MessageStatus.IN_PROGRESS) {
                slot.base = MessageCopies.withStatus(slot.base, finalStatus);
                slot.touch();
            }
        }
    }

    private MessageSlot put(Message message) {
        MessageSlot slot = slots.get(message.id());
        if (slot == null) {
            slot = new MessageSlot(message);
            slots.put(message.id(), slot);
        } else {
            slot.replace(message);
        }
        return slot;
    }

    private void countPendingInputs() {
        pendingInputs = (int) inputs.values().stream().filter(track -> track.pending).count();
        if (pendingInputs > 0 && status == RunStatus.RUNNING) {
            status = RunStatus.WAITING_FOR_INPUT;
        } else if (pendingInputs == 0 && status == RunStatus.WAITING_FOR_INPUT) {
            status = RunStatus.RUNNING;
        }
    }

    /** All messages of the run so far, in the order they first appeared. */
    public List<Message> messages() {
        List<Message> result = new ArrayList<>(slots.size());
        for (MessageSlot slot : slots.values()) {
            result.add(slot.materialize());
        }
        return result;
    }

    /** The messages changed since the previous call (or since the start), in order of first appearance. */
    public List<Message> takeChanged() {
        List<Message> result = new ArrayList<>();
        for (MessageSlot slot : slots.values()) {
            if (slot.dirty) {
                slot.dirty = false;
                result.add(slot.materialize());
            }
        }
        return result;
    }

    /** True if any message changed since the last {@link #takeChanged()}. */
    public boolean hasChanges() {
        for (MessageSlot slot : slots.values()) {
            if (slot.dirty) {
                return true;
            }
        }
        return false;
    }

    /** The message with this id, or null. */
    public @Nullable Message message(String messageId) {
        MessageSlot slot = slots.get(messageId);
        return slot == null ? null : slot.materialize();
    }

    /** The tool call with this execution id, or null. */
    public @Nullable ActionExecutionMessage action(String executionId) {
        String messageId = actionByExecutionId.get(executionId);
        return messageId == null ? null : (ActionExecutionMessage) slots.get(messageId).materialize();
    }

    /** The clarify question whose input id is this clarify id, or null. */
    public @Nullable ClarifyMessage clarify(String clarifyId) {
        InputTrack track = inputs.get(clarifyId);
        MessageSlot slot = track == null ? null : slots.get(track.asked.messageId());
        return slot != null && slot.base instanceof ClarifyMessage ? (ClarifyMessage) slot.materialize() : null;
    }

    /** Every input still waiting for the person, of every kind, oldest first. */
    public List<PendingInput> pendingInputs() {
        List<PendingInput> pending = new ArrayList<>();
        for (InputTrack track : inputs.values()) {
            if (track.pending) {
                pending.add(track.asked);
            }
        }
        return pending;
    }

    /** True while the input with this id waits for the person. */
    public boolean isPending(String inputId) {
        InputTrack track = inputs.get(inputId);
        return track != null && track.pending;
    }

    /** True once an answer to the input with this id was logged ({@code input_resolved} ANSWERED). */
    public boolean wasAnswered(String inputId) {
        InputTrack track = inputs.get(inputId);
        return track != null && track.answered;
    }

    /** QUEUED until {@code run_started}, then as the rules say. */
    public RunStatus status() {
        return status;
    }

    public boolean isTerminal() {
        return status.isTerminal();
    }

    /** The seq of the last applied event, 0 before any. */
    public long lastSeq() {
        return lastSeq;
    }

    public @Nullable ErrorInfo error() {
        return error;
    }

    /** The reason a RunFinished gave (for CANCELLED or INTERRUPTED), or null. */
    public @Nullable String finishReason() {
        return finishReason;
    }

    public @Nullable TokenUsage usage() {
        return usage;
    }

    public @Nullable String runtimeSessionId() {
        return runtimeSessionId;
    }

    public @Nullable String guardrailsFailureReason() {
        return guardrailsFailureReason;
    }

    public @Nullable String assistantMessageId() {
        return assistantMessageId;
    }
}
