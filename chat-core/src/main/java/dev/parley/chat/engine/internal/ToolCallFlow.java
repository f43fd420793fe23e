package dev.parley.chat.engine.internal;

import dev.parley.chat.engine.ApprovalPolicy;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionApproval;
import dev.parley.chat.engine.HostActionCall;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.ClientToolAnswer;
import dev.parley.chat.input.ClientToolRequest;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.ToolResult;
import dev.parley.chat.store.HostActionRecord;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One tool call whose result the host side supplies, from the agent's request to the result handed back: the
 * state machine every host action (the host's own, MCP tools) and every tool the person's browser runs goes
 * through. The engine feeds it events — the call was made ({@link #start}), the person answered or the
 * answer's deadline passed (through {@link RunInputs}) — and it does the rest: ask, claim, execute, record,
 * return.
 *
 * <pre>
 * host action:  REQUESTED → ALLOWED                          (no approval needed)
 *               REQUESTED → AWAITING_APPROVAL → ALLOWED      (allowed, perhaps with edited arguments)
 *                                             → RETURNED     (denied, or not approved in time)
 *               ALLOWED   → CLAIMED → EXECUTED → RETURNED    (this attempt holds the claim: the handler runs)
 *                         → RETURNED                         (no claim could be made, or the call completed before)
 *                         → LEFT_TO_ANOTHER                  (another attempt holds the claim)
 *               REQUESTED → RETURNED                         (the engine is too busy to run it)
 * client tool:  REQUESTED → AWAITING_BROWSER → RETURNED      (its result, or its timeout)
 * </pre>
 *
 * A host action runs only once claimed in the store (once per execution id, whichever attempt claims it); a
 * result is logged and handed to the runtime once. A move the table does not have is a defect: it throws, and
 * the run's guard ends the run FAILED. Thread-safe: each event is delivered once ({@link RunInputs} hands an
 * answer or an expiry to one continuation), on an engine worker.
 */
final class ToolCallFlow {
    private static final Logger log = LoggerFactory.getLogger(ToolCallFlow.class);

    /** Where the call stands. */
    enum State {
        REQUESTED, AWAITING_APPROVAL, AWAITING_BROWSER, ALLOWED, CLAIMED, EXECUTED, RETURNED, LEFT_TO_ANOTHER
    }

    private static final Map<State, Set<State>> MOVES = Map.of(
            State.REQUESTED, EnumSet.of(State.AWAITING_APPROVAL, State.AWAITING_BROWSER, State.ALLOWED, State.RETURNED),
            State.AWAITING_APPROVAL, EnumSet.of(State.ALLOWED, State.RETURNED),
            State.AWAITING_BROWSER, EnumSet.of(State.RETURNED),
            State.ALLOWED, EnumSet.of(State.CLAIMED, State.RETURNED, State.LEFT_TO_ANOTHER),
            State.CLAIMED, EnumSet.of(State.EXECUTED),
            State.EXECUTED, EnumSet.of(State.RETURNED),
            State.RETURNED, EnumSet.noneOf(State.class),
            State.LEFT_TO_ANOTHER, EnumSet.noneOf(State.class));

    private final EngineContext ctx;
    private final ActiveRun run;
    private final ActionExecutionMessage call;
    private final @Nullable HostAction action;
    private final @Nullable HostToolSpec clientTool;
    private final AtomicReference<State> state = new AtomicReference<>(State.REQUESTED);

    private ToolCallFlow(EngineContext ctx, ActiveRun run, ActionExecutionMessage call, @Nullable HostAction action,
            @Nullable HostToolSpec clientTool) {
        this.ctx = ctx;
        this.run = run;
        this.call = call;
        this.action = action;
        this.clientTool = clientTool;
    }

    /** A call of one of the host's actions. */
    static ToolCallFlow hostAction(EngineContext ctx, ActiveRun run, ActionExecutionMessage call, HostAction action) {
        return new ToolCallFlow(ctx, run, call, action, null);
    }

    /** A call of a tool the person's browser runs. */
    static ToolCallFlow clientTool(EngineContext ctx, ActiveRun run, ActionExecutionMessage call, HostToolSpec tool) {
        return new ToolCallFlow(ctx, run, call, null, tool);
    }

    /** The id of the approval the engine asks before running the host action called as {@code executionId}. */
    static String approvalInputId(String executionId) {
        return "approval:" + executionId;
    }

    /**
     * The agent made the call: a client tool waits, as a pending input, for the person's browser; a host
     * action goes to a worker, which asks the person first when the action's policy says so.
     */
    void start() {
        if (clientTool != null) {
            moveTo(State.AWAITING_BROWSER);
            run.inputs().ask(new AgentStreamEvent.InputRequested(call.id(), "tool:" + call.executionId(),
                    new ClientToolRequest(call.executionId(), call.name(), call.arguments(),
                            clientTool.parametersSchema()),
                    ctx.now().plus(ctx.limits.clientToolTimeout()), null), continuation(
                            answer -> browserAnswered((ClientToolAnswer) answer),
                            () -> returnResult("tool " + call.name() + " did not answer in time", true)));
            return;
        }
        try {
            ctx.work.execute(() -> run.guarded(this::approveThenExecute));
        } catch (RejectedExecutionException e) {
            returnResult("host action " + call.name() + " could not run: the engine is too busy", true);
        }
    }

    /**
     * After a restart: the approval the engine asked before the host stopped is still pending; it is waited
     * for again (nothing is asked again), and the action runs once it is allowed.
     */
    void awaitApprovalAgain() {
        moveTo(State.AWAITING_APPROVAL);
        run.inputs().awaitAgain(approvalInputId(call.executionId()), approvalContinuation());
    }

    private void browserAnswered(ClientToolAnswer answer) {
        returnResult(answer.result(), answer.error());
    }

    /**
     * Asks the person first when the action's policy says so (not again in a thread where they allowed it
     * for the conversation): the handler runs on allow, with the arguments they edited; a denial or an
     * expired approval goes back to the runtime as an error result the model can read.
     */
    private void approveThenExecute() {
        HostActionApproval approval = action().approval();
        if (approval.policy() == ApprovalPolicy.NEVER || approval.policy() == ApprovalPolicy.ONCE_PER_THREAD
                && approvedForThread()) {
            allowed(call.arguments());
            return;
        }
        List<ApprovalDecision> decisions = approval.policy() == ApprovalPolicy.ONCE_PER_THREAD
                ? List.of(ApprovalDecision.ALLOW_ONCE, ApprovalDecision.ALLOW_FOR_THREAD, ApprovalDecision.DENY)
                : List.of(ApprovalDecision.ALLOW_ONCE, ApprovalDecision.DENY);
        Instant deadline = approval.timeout() == null ? null : ctx.now().plus(approval.timeout());
        ApprovalRequest request = new ApprovalRequest(call.name(), call.arguments(), describe(approval), decisions,
                approval.argumentsEditable());
        moveTo(State.AWAITING_APPROVAL);
        run.inputs().ask(new AgentStreamEvent.InputRequested(run.runId() + ":approval:" + call.executionId(),
                approvalInputId(call.executionId()), request, deadline, null), approvalContinuation());
    }

    private RunInputs.Continuation approvalContinuation() {
        return continuation(answer -> approvalAnswered((ApprovalAnswer) answer),
                () -> returnResult("the call of " + call.name() + " was not approved in time", true));
    }

    private void approvalAnswered(ApprovalAnswer decided) {
        if (!decided.decision().allows()) {
            returnResult("the person denied this call of " + call.name(), true);
            return;
        }
        if (decided.decision() == ApprovalDecision.ALLOW_FOR_THREAD) {
            remember();
        }
        allowed(decided.editedArguments() != null ? decided.editedArguments() : call.arguments());
    }

    /**
     * Runs the action once it holds the claim in the store: without one the handler does not run (it might run
     * twice) and the runtime gets an error result; a call completed before gets its recorded result; a call
     * another attempt claimed is left to it. A result whose record cannot be stored still goes back (it is in
     * the run's event log).
     */
    private void allowed(String arguments) {
        moveTo(State.ALLOWED);
        String runId = run.runId();
        HostActionRecord record;
        try {
            record = StoreRetry.call(() -> ctx.store.claimHostAction(runId, call.executionId(), call.name(),
                    arguments, ctx.now()));
        } catch (RuntimeException e) {
            log.error("Run {}: host action {} could not be claimed; it does not run", runId, call.name(), e);
            returnResult("host action " + call.name() + " could not run: " + ActiveRun.message(e), true);
            return;
        }
        if (record.isCompleted()) {
            returnResult(record.result(), record.error());
            return;
        }
        if (!record.claimedNow()) {
            moveTo(State.LEFT_TO_ANOTHER);
            return;
        }
        moveTo(State.CLAIMED);
        String result;
        boolean error;
        try {
            String value = action().handler().handle(callOf(arguments));
            result = value == null ? "" : value;
            error = false;
        } catch (Exception | LinkageError e) {
            log.warn("Run {}: host action {} failed", runId, call.name(), e);
            result = "host action " + call.name() + " failed: " + ActiveRun.message(e);
            error = true;
        }
        moveTo(State.EXECUTED);
        String recorded = result;
        boolean recordedError = error;
        try {
            StoreRetry.run(() -> ctx.store.completeHostAction(runId, call.executionId(), recorded, recordedError,
                    ctx.now()));
        } catch (RuntimeException e) {
            log.error("Run {}: the result of host action {} could not be recorded; handing it back anyway", runId,
                    call.name(), e);
        }
        returnResult(result, error);
    }

    /** Logs the call's result and hands it to the runtime (a failing hand-over fails the run). */
    private void returnResult(String result, boolean error) {
        moveTo(State.RETURNED);
        String runId = run.runId();
        run.ingest(new AgentStreamEvent.ToolCallResult(runId + ":result:" + call.executionId(), call.executionId(),
                result, error));
        try {
            ctx.runtime.submitToolResult(new ToolResult(runId, call.executionId(), result, error));
        } catch (RuntimeException e) {
            log.warn("Run {}: handing the result of {} back to the runtime failed", runId, call.name(), e);
            run.fail(e);
        }
    }

    /** @throws IllegalStateException if the table has no such move from where the call stands */
    private void moveTo(State next) {
        State from = state.get();
        if (!MOVES.get(from).contains(next) || !state.compareAndSet(from, next)) {
            throw new IllegalStateException("tool call " + call.executionId() + " of run " + run.runId()
                    + " cannot move from " + from + " to " + next);
        }
    }

    private HostAction action() {
        if (action == null) {
            throw new IllegalStateException("tool call " + call.executionId() + " is not a host action's");
        }
        return action;
    }

    private boolean approvedForThread() {
        try {
            return StoreRetry.call(() -> ctx.store.isApprovedForThread(run.threadId(), call.name()));
        } catch (RuntimeException e) {
            log.warn("Run {}: whether {} is allowed in this thread could not be read; asking", run.runId(),
                    call.name(), e);
            return false;
        }
    }

    private void remember() {
        try {
            StoreRetry.run(() -> ctx.store.rememberApproval(run.threadId(), call.name(), ctx.now()));
        } catch (RuntimeException e) {
            log.warn("Run {}: allowing {} for the thread could not be stored; it will be asked again", run.runId(),
                    call.name(), e);
        }
    }

    private String describe(HostActionApproval approval) {
        try {
            String text = approval.description().apply(callOf(call.arguments()));
            if (text != null && !text.isBlank()) {
                return text;
            }
        } catch (RuntimeException e) {
            log.warn("Run {}: describing the call of {} failed", run.runId(), call.name(), e);
        }
        return "Runs " + call.name() + " with the arguments shown.";
    }

    private HostActionCall callOf(String arguments) {
        return new HostActionCall(run.threadId(), run.runId(), run.snapshot().ownerId(), call.executionId(),
                call.name(), arguments);
    }

    private static RunInputs.Continuation continuation(java.util.function.Consumer<InputAnswer> answered,
            Runnable expired) {
        return new RunInputs.Continuation() {
            @Override
            public void answered(InputAnswer answer) {
                answered.accept(answer);
            }

            @Override
            public void expired() {
                expired.run();
            }
        };
    }
}
