package dev.parley.chat.reduce;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.AgentStreamEvent.ClarifyOutcome;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.ActionExecutionMessage;
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
import dev.parley.chat.model.UserMessage;
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
 *   <li>{@code clarify_request} creates an IN_PROGRESS clarify message (a repeated clarify id is
 *       ignored) and the run is WAITING_FOR_INPUT. {@code clarify_resolved} on a pending clarify sets
 *       its answer and COMPLETED (ANSWERED) or CANCELLED; the run is RUNNING again once no clarify is
 *       pending.</li>
 *   <li>{@code usage} replaces the run's token usage and sets it on the assistant message;
 *       {@code runtime_session} records the runtime's session id.</li>
 *   <li>{@code run_finished} ends the run with its status; {@code run_failed} ends it FAILED, sets the
 *       error on the assistant message and adds an error message (id {@code runId + ":error"}). Every
 *       message still IN_PROGRESS takes the final status: COMPLETED, FAILED, CANCELLED or
 *       INTERRUPTED. Partial text is kept.</li>
 *   <li>Messages created by events get the event's timestamp as {@code createdAt}.</li>
 * </ol>
 *
 * <p>Not thread-safe: one reducer per run, fed from one thread at a time. Text is accumulated in
 * builders, so a long answer streamed token by token costs linear time; {@link #messages()} and
 * {@link #takeChanged()} build immutable messages on demand.
 */
public final class RunReducer {

    private final Map<String, Slot> slots = new LinkedHashMap<>();
    private final Map<String, String> actionByExecutionId = new HashMap<>();
    private final Map<String, String> clarifyByClarifyId = new HashMap<>();

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
    private int pendingClarifies;

    /** Applies one event; see the class rules. */
    public void apply(RunEvent logged) {
        if (logged.seq() <= lastSeq) {
            return;
        }
        lastSeq = logged.seq();
        AgentStreamEvent event = logged.event();
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
            Slot slot = assistantSlot(delta.messageId(), at);
            if (slot != null) {
                slot.text.append(delta.delta());
                slot.touch();
            }
        } else if (event instanceof AgentStreamEvent.TextFinal) {
            AgentStreamEvent.TextFinal text = (AgentStreamEvent.TextFinal) event;
            Slot slot = assistantSlot(text.messageId(), at);
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
                Slot slot = slots.get(messageId);
                slot.text.append(args.delta());
                slot.touch();
            }
        } else if (event instanceof AgentStreamEvent.ToolCallResult) {
            onToolCallResult((AgentStreamEvent.ToolCallResult) event, at);
        } else if (event instanceof AgentStreamEvent.TodosUpdated) {
            AgentStreamEvent.TodosUpdated todos = (AgentStreamEvent.TodosUpdated) event;
            Slot slot = slots.get(todos.messageId());
            Instant createdAt = slot != null ? slot.base.createdAt() : at;
            put(new TodoMessage(todos.messageId(), threadId, runId, assistantMessageId, MessageStatus.IN_PROGRESS,
                    createdAt, todos.items()));
        } else if (event instanceof AgentStreamEvent.StatusUpdate) {
            AgentStreamEvent.StatusUpdate update = (AgentStreamEvent.StatusUpdate) event;
            Slot slot = slots.get(update.messageId());
            Instant createdAt = slot != null ? slot.base.createdAt() : at;
            put(new StatusMessage(update.messageId(), threadId, runId, assistantMessageId, MessageStatus.COMPLETED,
                    createdAt, update.level(), update.text()));
        } else if (event instanceof AgentStreamEvent.ClarifyRequested) {
            onClarifyRequested((AgentStreamEvent.ClarifyRequested) event, at);
        } else if (event instanceof AgentStreamEvent.ClarifyResolved) {
            onClarifyResolved((AgentStreamEvent.ClarifyResolved) event);
        } else if (event instanceof AgentStreamEvent.Usage) {
            AgentStreamEvent.Usage reported = (AgentStreamEvent.Usage) event;
            usage = new TokenUsage(reported.inputTokens(), reported.outputTokens(), reported.totalTokens());
            Slot answer = assistantMessageId == null ? null : slots.get(assistantMessageId);
            if (answer != null && answer.base instanceof AssistantMessage) {
                answer.base = withUsage((AssistantMessage) answer.base, usage);
                answer.touch();
            }
        } else if (event instanceof AgentStreamEvent.RuntimeSession) {
            runtimeSessionId = ((AgentStreamEvent.RuntimeSession) event).sessionId();
        } else if (event instanceof AgentStreamEvent.RunFinished) {
            AgentStreamEvent.RunFinished finished = (AgentStreamEvent.RunFinished) event;
            finishReason = finished.reason();
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
            } else if (message instanceof ClarifyMessage) {
                clarifyByClarifyId.putIfAbsent(((ClarifyMessage) message).clarifyId(), message.id());
            }
        }
        pendingClarifies = countPendingClarifies();
        if (snapshot.guardrailsFailureReason() != null) {
            guardrailsFailureReason = snapshot.guardrailsFailureReason();
        }
    }

    private @Nullable Slot assistantSlot(String messageId, Instant at) {
        Slot slot = slots.get(messageId);
        if (slot == null) {
            return put(new AssistantMessage(messageId, threadId, runId, assistantMessageId, MessageStatus.IN_PROGRESS,
                    at, "", null, null));
        }
        return slot.base instanceof AssistantMessage ? slot : null;
    }

    private void onThinking(AgentStreamEvent.ThinkingDelta delta, Instant at) {
        Slot slot = slots.get(delta.messageId());
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
            Slot action = slots.get(actionId);
            ActionExecutionMessage call = (ActionExecutionMessage) action.materialize();
            name = call.name();
            if (call.status() == MessageStatus.IN_PROGRESS) {
                action.base = withStatus(call, result.error() ? MessageStatus.FAILED : MessageStatus.COMPLETED);
                action.touch();
            }
        }
        put(new ResultMessage(result.messageId(), threadId, runId, assistantMessageId, MessageStatus.COMPLETED, at,
                result.executionId(), name, result.result(), result.error()));
    }

    private void onClarifyRequested(AgentStreamEvent.ClarifyRequested request, Instant at) {
        if (clarifyByClarifyId.containsKey(request.clarifyId()) || slots.containsKey(request.messageId())) {
            return;
        }
        put(new ClarifyMessage(request.messageId(), threadId, runId, assistantMessageId, MessageStatus.IN_PROGRESS,
                at, request.clarifyId(), request.question(), request.choices(), request.multiSelect(), List.of()));
        clarifyByClarifyId.put(request.clarifyId(), request.messageId());
        pendingClarifies++;
        status = RunStatus.WAITING_FOR_INPUT;
    }

    private void onClarifyResolved(AgentStreamEvent.ClarifyResolved resolved) {
        String messageId = clarifyByClarifyId.get(resolved.clarifyId());
        if (messageId == null) {
            return;
        }
        Slot slot = slots.get(messageId);
        ClarifyMessage clarify = (ClarifyMessage) slot.materialize();
        if (!clarify.isPending()) {
            return;
        }
        boolean answered = resolved.outcome() == ClarifyOutcome.ANSWERED;
        slot.base = new ClarifyMessage(clarify.id(), clarify.threadId(), clarify.runId(), clarify.parentMessageId(),
                answered ? MessageStatus.COMPLETED : MessageStatus.CANCELLED, clarify.createdAt(), clarify.clarifyId(),
                clarify.question(), clarify.choices(), clarify.multiSelect(),
                answered ? resolved.answer() : List.of());
        slot.touch();
        pendingClarifies--;
        if (pendingClarifies == 0 && status == RunStatus.WAITING_FOR_INPUT) {
            status = RunStatus.RUNNING;
        }
    }

    private void onFailed(AgentStreamEvent.RunFailed failed, Instant at) {
        error = new ErrorInfo(failed.code(), failed.message());
        Slot answer = assistantMessageId == null ? null : slots.get(assistantMessageId);
        if (answer != null && answer.base instanceof AssistantMessage) {
            answer.base = withError((AssistantMessage) answer.base, error);
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
        pendingClarifies = 0;
        MessageStatus finalStatus = terminal.finalMessageStatus();
        for (Slot slot : slots.values()) {
            if (slot.base.status() == MessageStatus.IN_PROGRESS) {
                slot.base = withStatus(slot.base, finalStatus);
                slot.touch();
            }
        }
    }

    private Slot put(Message message) {
        Slot slot = slots.get(message.id());
        if (slot == null) {
            slot = new Slot(message);
            slots.put(message.id(), slot);
        } else {
            slot.replace(message);
        }
        return slot;
    }

    private int countPendingClarifies() {
        int count = 0;
        for (Slot slot : slots.values()) {
            if (slot.base instanceof ClarifyMessage && slot.base.status() == MessageStatus.IN_PROGRESS) {
                count++;
            }
        }
        if (count > 0 && status == RunStatus.RUNNING) {
            status = RunStatus.WAITING_FOR_INPUT;
        } else if (count == 0 && status == RunStatus.WAITING_FOR_INPUT) {
            status = RunStatus.RUNNING;
        }
        return count;
    }

    /** All messages of the run so far, in the order they first appeared. */
    public List<Message> messages() {
        List<Message> result = new ArrayList<>(slots.size());
        for (Slot slot : slots.values()) {
            result.add(slot.materialize());
        }
        return result;
    }

    /** The messages changed since the previous call (or since the start), in order of first appearance. */
    public List<Message> takeChanged() {
        List<Message> result = new ArrayList<>();
        for (Slot slot : slots.values()) {
            if (slot.dirty) {
                slot.dirty = false;
                result.add(slot.materialize());
            }
        }
        return result;
    }

    /** True if any message changed since the last {@link #takeChanged()}. */
    public boolean hasChanges() {
        for (Slot slot : slots.values()) {
            if (slot.dirty) {
                return true;
            }
        }
        return false;
    }

    /** The message with this id, or null. */
    public @Nullable Message message(String messageId) {
        Slot slot = slots.get(messageId);
        return slot == null ? null : slot.materialize();
    }

    /** The tool call with this execution id, or null. */
    public @Nullable ActionExecutionMessage action(String executionId) {
        String messageId = actionByExecutionId.get(executionId);
        return messageId == null ? null : (ActionExecutionMessage) slots.get(messageId).materialize();
    }

    /** The clarify question with this clarify id, or null. */
    public @Nullable ClarifyMessage clarify(String clarifyId) {
        String messageId = clarifyByClarifyId.get(clarifyId);
        return messageId == null ? null : (ClarifyMessage) slots.get(messageId).materialize();
    }

    /** The clarify questions still waiting for an answer, oldest first. */
    public List<ClarifyMessage> pendingClarifies() {
        List<ClarifyMessage> pending = new ArrayList<>();
        for (Slot slot : slots.values()) {
            if (slot.base instanceof ClarifyMessage && slot.base.status() == MessageStatus.IN_PROGRESS) {
                pending.add((ClarifyMessage) slot.base);
            }
        }
        return pending;
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

    /** One message under construction: its last immutable form plus a text builder for streamed text. */
    private static final class Slot {
        Message base;
        final StringBuilder text = new StringBuilder();
        boolean dirty = true;
        @Nullable Message cached;

        Slot(Message message) {
            replace(message);
        }

        void replace(Message message) {
            base = message;
            text.setLength(0);
            text.append(streamedText(message));
            touch();
        }

        void touch() {
            dirty = true;
            cached = null;
        }

        Message materialize() {
            Message result = cached;
            if (result == null) {
                result = withStreamedText(base, text);
                cached = result;
            }
            return result;
        }
    }

    private static String streamedText(Message message) {
        if (message instanceof AssistantMessage) {
            return ((AssistantMessage) message).text();
        }
        if (message instanceof ThinkingMessage) {
            return ((ThinkingMessage) message).text();
        }
        if (message instanceof ActionExecutionMessage) {
            return ((ActionExecutionMessage) message).arguments();
        }
        return "";
    }

    private static Message withStreamedText(Message m, CharSequence text) {
        if (m instanceof AssistantMessage) {
            AssistantMessage a = (AssistantMessage) m;
            return new AssistantMessage(a.id(), a.threadId(), a.runId(), a.parentMessageId(), a.status(), a.createdAt(),
                    text.toString(), a.error(), a.usage());
        }
        if (m instanceof ThinkingMessage) {
            ThinkingMessage t = (ThinkingMessage) m;
            return new ThinkingMessage(t.id(), t.threadId(), t.runId(), t.parentMessageId(), t.status(), t.createdAt(),
                    text.toString());
        }
        if (m instanceof ActionExecutionMessage) {
            ActionExecutionMessage a = (ActionExecutionMessage) m;
            return new ActionExecutionMessage(a.id(), a.threadId(), a.runId(), a.parentMessageId(), a.status(),
                    a.createdAt(), a.executionId(), a.name(), text.toString());
        }
        return m;
    }

    private static AssistantMessage withUsage(AssistantMessage a, TokenUsage tokens) {
        return new AssistantMessage(a.id(), a.threadId(), a.runId(), a.parentMessageId(), a.status(), a.createdAt(),
                a.text(), a.error(), tokens);
    }

    private static AssistantMessage withError(AssistantMessage a, ErrorInfo failure) {
        return new AssistantMessage(a.id(), a.threadId(), a.runId(), a.parentMessageId(), a.status(), a.createdAt(),
                a.text(), failure, a.usage());
    }

    /** The same message with another status; streamed text is kept by the slot, not here. */
    private static Message withStatus(Message m, MessageStatus s) {
        switch (m.kind()) {
            case USER: {
                UserMessage u = (UserMessage) m;
                return new UserMessage(u.id(), u.threadId(), u.runId(), u.parentMessageId(), s, u.createdAt(), u.text());
            }
            case ASSISTANT: {
                AssistantMessage a = (AssistantMessage) m;
                return new AssistantMessage(a.id(), a.threadId(), a.runId(), a.parentMessageId(), s, a.createdAt(),
                        a.text(), a.error(), a.usage());
            }
            case THINKING: {
                ThinkingMessage t = (ThinkingMessage) m;
                return new ThinkingMessage(t.id(), t.threadId(), t.runId(), t.parentMessageId(), s, t.createdAt(),
                        t.text());
            }
            case ACTION_EXECUTION: {
                ActionExecutionMessage a = (ActionExecutionMessage) m;
                return new ActionExecutionMessage(a.id(), a.threadId(), a.runId(), a.parentMessageId(), s,
                        a.createdAt(), a.executionId(), a.name(), a.arguments());
            }
            case RESULT: {
                ResultMessage r = (ResultMessage) m;
                return new ResultMessage(r.id(), r.threadId(), r.runId(), r.parentMessageId(), s, r.createdAt(),
                        r.executionId(), r.name(), r.result(), r.error());
            }
            case STATUS: {
                StatusMessage st = (StatusMessage) m;
                return new StatusMessage(st.id(), st.threadId(), st.runId(), st.parentMessageId(), s, st.createdAt(),
                        st.level(), st.text());
            }
            case TODO: {
                TodoMessage t = (TodoMessage) m;
                return new TodoMessage(t.id(), t.threadId(), t.runId(), t.parentMessageId(), s, t.createdAt(),
                        t.items());
            }
            case CLARIFY: {
                ClarifyMessage c = (ClarifyMessage) m;
                return new ClarifyMessage(c.id(), c.threadId(), c.runId(), c.parentMessageId(), s, c.createdAt(),
                        c.clarifyId(), c.question(), c.choices(), c.multiSelect(), c.answer());
            }
            case ERROR: {
                ErrorMessage e = (ErrorMessage) m;
                return new ErrorMessage(e.id(), e.threadId(), e.runId(), e.parentMessageId(), s, e.createdAt(),
                        e.code(), e.message());
            }
            default:
                throw new IllegalStateException("unknown message kind " + m.kind());
        }
    }
}
