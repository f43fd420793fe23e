package dev.parley.chat.engine.internal;

import dev.parley.chat.engine.ApprovalPolicy;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionApproval;
import dev.parley.chat.engine.HostActionCall;
import dev.parley.chat.engine.HostActionScope;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.ClientToolAnswer;
import dev.parley.chat.input.ClientToolRequest;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.ToolResult;
import dev.parley.chat.store.HostActionRecord;
import java.time.Instant;
import dev.parley.chat.runtime.HostToolSpec;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the tools of one run whose results the host side supplies: the host's actions, on the engine's
 * workers (after the person's approval when the action asks for one, once per execution id, claimed in the
 * store), and the tools the person's browser runs (a pending input each). Results are logged and handed back
 * to the runtime. Thread-safe.
 */
final class ToolRunner {
    private static final Logger log = LoggerFactory.getLogger(ToolRunner.class);

    private final EngineContext ctx;
    private final ActiveRun run;
    /** The tools the person's browser runs for this run, by name. */
    private final Map<String, HostToolSpec> clientTools;

    /** The run's host actions, asked of the engine's sources once for this attempt (see {@link #hostActions}). */
    private final HostActionScope scope;
    private volatile @Nullable Map<String, HostAction> hostActions;

    ToolRunner(EngineContext ctx, ActiveRun run, List<HostToolSpec> clientTools, HostActionScope scope) {
        this.ctx = ctx;
        this.run = run;
        Map<String, HostToolSpec> byName = new LinkedHashMap<>();
        clientTools.forEach(tool -> byName.put(tool.name(), tool));
        this.clientTools = Map.copyOf(byName);
        this.scope = scope;
    }

    /**
     * The host actions of this run attempt, by name: found the first time they are needed (offered to the
     * runtime, or looked up after a restart) and kept, so that a call runs the action its model was offered.
     * Where the runtime cannot call host tools, the sources are not asked (nothing is offered to it; the
     * fixed actions still tell a restart which calls were the host's, as before sources existed).
     */
    Map<String, HostAction> hostActions() {
        Map<String, HostAction> known = hostActions;
        if (known == null) {
            synchronized (this) {
                known = hostActions;
                if (known == null) {
                    known = ctx.can(Capability.HOST_TOOLS) ? ctx.hostActions.resolve(scope, clientTools.keySet())
                            : ctx.hostActions.fixed();
                    hostActions = known;
                }
            }
        }
        return known;
    }

    /** True if the person's browser runs tool {@code name} for this run. */
    boolean isClientTool(String name) {
        return clientTools.containsKey(name);
    }

    /** The client tools, for the runtime's request. */
    Collection<HostToolSpec> clientTools() {
        return clientTools.values();
    }

    /**
     * The agent finished calling {@code call}: a client tool waits, as a pending input, for the person's
     * browser; a host action runs on a worker (after the person's approval when it asks for one). Other tools
     * are the runtime's own.
     */
    void called(ActionExecutionMessage call) {
        HostToolSpec clientTool = clientTools.get(call.name());
        if (clientTool == null) {
            hostActionCalled(call);
            return;
        }
        run.inputs().ask(new AgentStreamEvent.InputRequested(call.id(), "tool:" + call.executionId(),
                new ClientToolRequest(call.executionId(), call.name(), call.arguments(), clientTool.parametersSchema()),
                ctx.now().plus(ctx.limits.clientToolTimeout()), null), new RunInputs.Continuation() {
                    @Override
                    public void answered(InputAnswer answer) {
                        ClientToolAnswer result = (ClientToolAnswer) answer;
                        returnResult(call, result.result(), result.error());
                    }

                    @Override
                    public void expired() {
                        returnResult(call, "tool " + call.name() + " did not answer in time", true);
                    }
                });
    }

    private void hostActionCalled(ActionExecutionMessage call) {
        HostAction action = hostActions().get(call.name());
        if (action == null) {
            return;
        }
        try {
            ctx.work.execute(() -> run.guarded(() -> approveThenExecute(call, action)));
        } catch (RejectedExecutionException e) {
            returnResult(call, "host action " + call.name() + " could not run: the engine is too busy", true);
        }
    }

    /**
     * Asks the person first when the action's policy says so (not again in a thread where they allowed it
     * for the conversation): the handler runs on allow, with the arguments they edited; a denial or an
     * expired approval goes back to the runtime as an error result the model can read.
     */
    private void approveThenExecute(ActionExecutionMessage call, HostAction action) {
        HostActionApproval approval = action.approval();
        if (approval.policy() == ApprovalPolicy.NEVER || approval.policy() == ApprovalPolicy.ONCE_PER_THREAD
                && approvedForThread(call.name())) {
            execute(call, action, call.arguments());
            return;
        }
        List<ApprovalDecision> decisions = approval.policy() == ApprovalPolicy.ONCE_PER_THREAD
                ? List.of(ApprovalDecision.ALLOW_ONCE, ApprovalDecision.ALLOW_FOR_THREAD, ApprovalDecision.DENY)
                : List.of(ApprovalDecision.ALLOW_ONCE, ApprovalDecision.DENY);
        Instant deadline = approval.timeout() == null ? null : ctx.now().plus(approval.timeout());
        ApprovalRequest request = new ApprovalRequest(call.name(), call.arguments(), describe(call, approval),
                decisions, approval.argumentsEditable());
        run.inputs().ask(new AgentStreamEvent.InputRequested(run.runId() + ":approval:" + call.executionId(),
                approvalInputId(call.executionId()), request, deadline, null), afterApproval(call, action));
    }

    /** The id of the approval the engine asks before running the host action called as {@code executionId}. */
    static String approvalInputId(String executionId) {
        return "approval:" + executionId;
    }

    /**
     * After a restart: the approval the engine asked before the host stopped is still pending; it is waited
     * for again (nothing is asked again), and the action runs once it is allowed.
     *
     * @return false if {@code call} is not a host action this engine knows
     */
    boolean awaitApprovalAgain(ActionExecutionMessage call) {
        HostAction action = hostActions().get(call.name());
        if (action == null) {
            return false;
        }
        run.inputs().awaitAgain(approvalInputId(call.executionId()), afterApproval(call, action));
        return true;
    }

    private RunInputs.Continuation afterApproval(ActionExecutionMessage call, HostAction action) {
        return new RunInputs.Continuation() {
            @Override
            public void answered(InputAnswer answer) {
                ApprovalAnswer decided = (ApprovalAnswer) answer;
                if (!decided.decision().allows()) {
                    returnResult(call, "the person denied this call of " + call.name(), true);
                    return;
                }
                if (decided.decision() == ApprovalDecision.ALLOW_FOR_THREAD) {
                    remember(call.name());
                }
                execute(call, action, decided.editedArguments() != null ? decided.editedArguments()
                        : call.arguments());
            }

            @Override
            public void expired() {
                returnResult(call, "the call of " + call.name() + " was not approved in time", true);
            }
        };
    }

    private boolean approvedForThread(String name) {
        try {
            return StoreRetry.call(() -> ctx.store.isApprovedForThread(run.threadId(), name));
        } catch (RuntimeException e) {
            log.warn("Run {}: whether {} is allowed in this thread could not be read; asking", run.runId(), name, e);
            return false;
        }
    }

    private void remember(String name) {
        try {
            StoreRetry.run(() -> ctx.store.rememberApproval(run.threadId(), name, ctx.now()));
        } catch (RuntimeException e) {
            log.warn("Run {}: allowing {} for the thread could not be stored; it will be asked again", run.runId(),
                    name, e);
        }
    }

    private String describe(ActionExecutionMessage call, HostActionApproval approval) {
        try {
            String text = approval.description().apply(callOf(call, call.arguments()));
            if (text != null && !text.isBlank()) {
                return text;
            }
        } catch (RuntimeException e) {
            log.warn("Run {}: describing the call of {} failed", run.runId(), call.name(), e);
        }
        return "Runs " + call.name() + " with the arguments shown.";
    }

    private HostActionCall callOf(ActionExecutionMessage call, String arguments) {
        return new HostActionCall(run.threadId(), run.runId(), run.snapshot().ownerId(), call.executionId(),
                call.name(), arguments);
    }

    /**
     * Without a claim in the store the handler does not run (it might run twice) and the runtime gets an
     * error result; a result whose record cannot be stored still goes back (it is in the run's event log).
     */
    private void execute(ActionExecutionMessage call, HostAction action, String arguments) {
        String runId = run.runId();
        HostActionRecord record;
        try {
            record = StoreRetry.call(() -> ctx.store.claimHostAction(runId, call.executionId(), call.name(),
                    arguments, ctx.now()));
        } catch (RuntimeException e) {
            log.error("Run {}: host action {} could not be claimed; it does not run", runId, call.name(), e);
            returnResult(call, "host action " + call.name() + " could not run: " + ActiveRun.message(e), true);
            return;
        }
        if (record.isCompleted()) {
            returnResult(call, record.result(), record.error());
            return;
        }
        if (!record.claimedNow()) {
            return;
        }
        String result;
        boolean error;
        try {
            String value = action.handler().handle(callOf(call, arguments));
            result = value == null ? "" : value;
            error = false;
        } catch (Exception | LinkageError e) {
            log.warn("Run {}: host action {} failed", runId, call.name(), e);
            result = "host action " + call.name() + " failed: " + ActiveRun.message(e);
            error = true;
        }
        String recorded = result;
        boolean recordedError = error;
        try {
            StoreRetry.run(() -> ctx.store.completeHostAction(runId, call.executionId(), recorded, recordedError,
                    ctx.now()));
        } catch (RuntimeException e) {
            log.error("Run {}: the result of host action {} could not be recorded; handing it back anyway", runId,
                    call.name(), e);
        }
        returnResult(call, result, error);
    }

    /** Logs a tool call's result and hands it to the runtime (a failing hand-over fails the run). */
    void returnResult(ActionExecutionMessage call, String result, boolean error) {
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
}
