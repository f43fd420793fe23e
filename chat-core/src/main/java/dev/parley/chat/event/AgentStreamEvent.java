package dev.parley.chat.event;

import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputRequest;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.TodoItem;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One thing a runtime did during a run. Whole messages — {@code {threadId, runId, messages,
 * guardrailsFailureReason}} — are a {@link MessagesSnapshot}; the other kinds are cheap deltas (a streamed
 * token is one small event, never the whole message again) and the run's lifecycle.
 *
 * <p>How events turn into messages is defined once, by {@link dev.parley.chat.reduce.RunReducer}; the
 * browser client applies the same rules. {@link #type()} is the stable JSON discriminator.
 *
 * <h2>Who emits what</h2>
 * A {@link dev.parley.chat.runtime.RuntimeAdapter} emits every kind except {@link RunStarted} and an
 * answered or expired {@link InputResolved}, which the engine emits itself. {@link ClarifyRequested} and
 * {@link ClarifyResolved} are the older form of a clarify's input events: still read (and accepted from
 * runtimes), logged by this version as {@link InputRequested} and {@link InputResolved}. A run's stream ends with exactly one
 * terminal event, {@link RunFinished} or {@link RunFailed}; the engine ignores anything after it and
 * ends the run as FAILED if the stream completes without one.
 *
 * <h2>Message ids</h2>
 * Events that create messages carry the new message's id. Ids must be unique across runs; adapters
 * usually derive them from the run id (e.g. {@code runId + ":tool:" + toolCallId}).
 */
public sealed interface AgentStreamEvent {

    /** The JSON discriminator, e.g. {@code text_delta}. */
    String type();

    /**
     * The event in this version's form: a {@link ClarifyRequested} or {@link ClarifyResolved} as the
     * {@link InputRequested} or {@link InputResolved} of kind clarify it stands for (input id = clarify
     * id); any other event as it is.
     */
    static AgentStreamEvent current(AgentStreamEvent event) {
        if (event instanceof ClarifyRequested ask) {
            return new InputRequested(ask.messageId(), ask.clarifyId(),
                    new ClarifyRequest(ask.question(), ask.choices(), ask.multiSelect()), null, ask.resumeToken());
        }
        if (event instanceof ClarifyResolved resolved) {
            boolean answered = resolved.outcome() == ClarifyOutcome.ANSWERED;
            return new InputResolved(resolved.clarifyId(), answered ? InputOutcome.ANSWERED : InputOutcome.CANCELLED,
                    answered ? new ClarifyAnswer(resolved.answer()) : null);
        }
        return event;
    }

    /** True for {@link RunFinished} and {@link RunFailed}. */
    default boolean isTerminal() {
        return false;
    }

    /** The run began; emitted by the engine as a run's first event. */
    record RunStarted(String threadId, String runId, String assistantMessageId) implements AgentStreamEvent {
        public static final String TYPE = "run_started";

        public RunStarted {
            Objects.requireNonNull(threadId, "threadId");
            Objects.requireNonNull(runId, "runId");
            Objects.requireNonNull(assistantMessageId, "assistantMessageId");
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /**
     * The runtime reported its own session id for the thread (Hermes rotates it when it compresses
     * context); the engine stores it on the thread and sends it with the next run.
     *
     * @param resumed whether the runtime continued the session it was given (false: a fresh session)
     */
    record RuntimeSession(String sessionId, boolean resumed) implements AgentStreamEvent {
        public static final String TYPE = "runtime_session";

        public RuntimeSession {
            Objects.requireNonNull(sessionId, "sessionId");
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /**
     * Whole messages to insert or replace (by id), and optionally why the runtime's
     * guardrails refused. {@code threadId} and {@code runId} may be null when the runtime does not know
     * them; the run's own ids apply.
     */
    record MessagesSnapshot(
            @Nullable String threadId,
            @Nullable String runId,
            List<Message> messages,
            @Nullable String guardrailsFailureReason)
            implements AgentStreamEvent {
        public static final String TYPE = "messages";

        public MessagesSnapshot {
            messages = messages == null ? List.of() : List.copyOf(messages);
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /** A piece of answer text, appended to the assistant message {@code messageId}. */
    record TextDelta(String messageId, String delta) implements AgentStreamEvent {
        public static final String TYPE = "text_delta";

        public TextDelta {
            Objects.requireNonNull(messageId, "messageId");
            Objects.requireNonNull(delta, "delta");
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /** The whole answer text of the assistant message {@code messageId}; replaces what was streamed. */
    record TextFinal(String messageId, String text) implements AgentStreamEvent {
        public static final String TYPE = "text_final";

        public TextFinal {
            Objects.requireNonNull(messageId, "messageId");
            Objects.requireNonNull(text, "text");
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /** A piece of reasoning text, appended to the thinking message {@code messageId} (created if new). */
    record ThinkingDelta(String messageId, String delta) implements AgentStreamEvent {
        public static final String TYPE = "thinking_delta";

        public ThinkingDelta {
            Objects.requireNonNull(messageId, "messageId");
            Objects.requireNonNull(delta, "delta");
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /**
     * A tool call began. {@code arguments} is JSON text: complete, partial (more arrives as
     * {@link ToolCallArgs}) or empty.
     */
    record ToolCallStart(String messageId, String executionId, String name, String arguments)
            implements AgentStreamEvent {
        public static final String TYPE = "tool_call_start";

        public ToolCallStart {
            Objects.requireNonNull(messageId, "messageId");
            Objects.requireNonNull(executionId, "executionId");
            Objects.requireNonNull(name, "name");
            arguments = arguments == null ? "" : arguments;
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /** A piece of a tool call's JSON arguments. */
    record ToolCallArgs(String executionId, String delta) implements AgentStreamEvent {
        public static final String TYPE = "tool_call_args";

        public ToolCallArgs {
            Objects.requireNonNull(executionId, "executionId");
            Objects.requireNonNull(delta, "delta");
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /**
     * A tool call's arguments are complete. For a host action (a tool the host registered with the
     * engine) this is the signal that runs its handler.
     */
    record ToolCallEnd(String executionId) implements AgentStreamEvent {
        public static final String TYPE = "tool_call_end";

        public ToolCallEnd {
            Objects.requireNonNull(executionId, "executionId");
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /** The result of a tool call, stored as the result message {@code messageId}. */
    record ToolCallResult(String messageId, String executionId, String result, boolean error)
            implements AgentStreamEvent {
        public static final String TYPE = "tool_call_result";

        public ToolCallResult {
            Objects.requireNonNull(messageId, "messageId");
            Objects.requireNonNull(executionId, "executionId");
            Objects.requireNonNull(result, "result");
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /** The agent's todo list changed; {@code items} replaces the list held by {@code messageId}. */
    record TodosUpdated(String messageId, List<TodoItem> items) implements AgentStreamEvent {
        public static final String TYPE = "todos";

        public TodosUpdated {
            Objects.requireNonNull(messageId, "messageId");
            items = items == null ? List.of() : List.copyOf(items);
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /** A status line; {@code level} is the runtime's category (lifecycle, warn, busy, …). */
    record StatusUpdate(String messageId, String level, String text) implements AgentStreamEvent {
        public static final String TYPE = "status";

        public StatusUpdate {
            Objects.requireNonNull(messageId, "messageId");
            Objects.requireNonNull(level, "level");
            Objects.requireNonNull(text, "text");
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /**
     * The agent asks the person something and waits: the run becomes WAITING_FOR_INPUT.
     *
     * @param choices the offered answers; empty for free text only
     * @param resumeToken the adapter's opaque position in its runtime stream, kept with the pending
     *     clarify so that a restarted host can re-attach to the waiting run; null if not supported
     */
    record ClarifyRequested(
            String messageId,
            String clarifyId,
            String question,
            List<String> choices,
            boolean multiSelect,
            @Nullable String resumeToken)
            implements AgentStreamEvent {
        public static final String TYPE = "clarify_request";

        public ClarifyRequested {
            Objects.requireNonNull(messageId, "messageId");
            Objects.requireNonNull(clarifyId, "clarifyId");
            Objects.requireNonNull(question, "question");
            choices = choices == null ? List.of() : List.copyOf(choices);
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /** How a clarify question ended. */
    enum ClarifyOutcome {
        ANSWERED,
        CANCELLED
    }

    /**
     * A clarify question ended: answered (emitted by the engine when it delivered the answer) or
     * cancelled (emitted by the adapter). {@code answer} is empty unless answered.
     */
    record ClarifyResolved(String clarifyId, ClarifyOutcome outcome, List<String> answer) implements AgentStreamEvent {
        public static final String TYPE = "clarify_resolved";

        public ClarifyResolved {
            Objects.requireNonNull(clarifyId, "clarifyId");
            Objects.requireNonNull(outcome, "outcome");
            answer = answer == null ? List.of() : List.copyOf(answer);
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /**
     * The run waits for a person: a clarify question, an approval, or a tool the person's browser runs (a
     * pending input). The run is WAITING_FOR_INPUT until every pending input is resolved. Runtimes emit it
     * for the inputs they ask themselves (clarify, approval); the engine emits it for host-action approvals
     * and client tools. A runtime may still emit {@link ClarifyRequested} instead: the engine logs that as
     * an {@code input_requested} of kind clarify.
     *
     * @param messageId the message that shows the input (a clarify or approval message; for a client tool,
     *     the tool call's message)
     * @param inputId unique within the run; the id an answer names
     * @param deadline when the input expires if still pending; null for never
     * @param resumeToken the adapter's opaque position in its runtime stream, kept with the pending input so
     *     that a restarted host can re-attach to the waiting run; null if not supported
     */
    record InputRequested(
            String messageId,
            String inputId,
            InputRequest request,
            @Nullable Instant deadline,
            @Nullable String resumeToken)
            implements AgentStreamEvent {
        public static final String TYPE = "input_requested";

        public InputRequested {
            Objects.requireNonNull(messageId, "messageId");
            Objects.requireNonNull(inputId, "inputId");
            Objects.requireNonNull(request, "request");
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /** How a pending input ended. */
    enum InputOutcome {
        ANSWERED,
        EXPIRED,
        CANCELLED
    }

    /**
     * A pending input ended: answered (emitted by the engine once the answer reached whoever asked),
     * expired (emitted by the engine at its deadline) or cancelled (emitted by the adapter when the
     * runtime withdraws it). A runtime may emit {@link ClarifyResolved} with CANCELLED instead.
     *
     * @param answer the answer when ANSWERED, else null
     */
    record InputResolved(String inputId, InputOutcome outcome, @Nullable InputAnswer answer)
            implements AgentStreamEvent {
        public static final String TYPE = "input_resolved";

        public InputResolved {
            Objects.requireNonNull(inputId, "inputId");
            Objects.requireNonNull(outcome, "outcome");
            if ((outcome == InputOutcome.ANSWERED) != (answer != null)) {
                throw new IllegalArgumentException("an answer comes with ANSWERED and only with it");
            }
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /** Token usage so far (totals, each report replaces the previous one). */
    record Usage(long inputTokens, long outputTokens, long totalTokens) implements AgentStreamEvent {
        public static final String TYPE = "usage";

        public Usage {
            if (inputTokens < 0 || outputTokens < 0 || totalTokens < 0) {
                throw new IllegalArgumentException("token counts must not be negative");
            }
        }

        @Override
        public String type() {
            return TYPE;
        }
    }

    /**
     * The run ended without failing: {@code SUCCEEDED}, {@code CANCELLED} or {@code INTERRUPTED}.
     *
     * @param reason a short explanation for CANCELLED and INTERRUPTED, null otherwise
     * @param truncated SUCCEEDED only: the model stopped at its length limit, so the answer is cut off (the
     *     run's assistant message is marked {@link dev.parley.chat.model.AssistantMessage#truncated()})
     */
    record RunFinished(RunStatus status, @Nullable String reason, boolean truncated) implements AgentStreamEvent {
        public static final String TYPE = "run_finished";

        public RunFinished {
            Objects.requireNonNull(status, "status");
            if (!status.isTerminal() || status == RunStatus.FAILED) {
                throw new IllegalArgumentException("RunFinished takes SUCCEEDED, CANCELLED or INTERRUPTED, not " + status);
            }
            if (truncated && status != RunStatus.SUCCEEDED) {
                throw new IllegalArgumentException("only a SUCCEEDED run has a truncated answer, not " + status);
            }
        }

        /** An end whose answer was not cut off. */
        public RunFinished(RunStatus status, @Nullable String reason) {
            this(status, reason, false);
        }

        @Override
        public String type() {
            return TYPE;
        }

        @Override
        public boolean isTerminal() {
            return true;
        }
    }

    /**
     * The run failed.
     *
     * @param code why, as text: usually a {@link dev.parley.chat.RunErrorCode} name (every
     *     {@link dev.parley.chat.ErrorCode} name is one), but a runtime's or adapter's own code may appear;
     *     readers keep a default for codes they do not know
     * @param retryAfterSeconds how long the model provider asked to wait before trying again (whole
     *     seconds), null when it did not say; set with {@code RATE_LIMITED} where the model library reports
     *     the provider's {@code Retry-After}
     */
    record RunFailed(String code, String message, @Nullable Long retryAfterSeconds) implements AgentStreamEvent {
        public static final String TYPE = "run_failed";

        public RunFailed {
            Objects.requireNonNull(code, "code");
            Objects.requireNonNull(message, "message");
            if (retryAfterSeconds != null && retryAfterSeconds < 0) {
                throw new IllegalArgumentException("retryAfterSeconds must not be negative, got " + retryAfterSeconds);
            }
        }

        /** A failure without a retry hint. */
        public RunFailed(String code, String message) {
            this(code, message, null);
        }

        @Override
        public String type() {
            return TYPE;
        }

        @Override
        public boolean isTerminal() {
            return true;
        }
    }

    /**
     * An event of a kind this version does not know, read from JSON written by a newer version. It is
     * relayed as is and ignored by the reducer. Adapters never emit it.
     *
     * @param json the event's whole JSON object
     */
    record Unknown(String type, String json) implements AgentStreamEvent {
        public Unknown {
            Objects.requireNonNull(type, "type");
            Objects.requireNonNull(json, "json");
        }
    }
}
