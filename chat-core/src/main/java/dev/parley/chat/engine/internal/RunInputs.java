package dev.parley.chat.engine.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.ClientToolAnswer;
import dev.parley.chat.input.ClientToolRequest;
import dev.parley.chat.input.InputAnswer;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.ApprovalReply;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.runtime.ToolResult;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run's pending inputs while it lives here: who an answer goes to, and deadlines.
 *
 * <p>An input the runtime asked for (a clarify, an approval) is answered through the runtime's call for
 * its kind; an input the engine asked for itself (a host action's approval, a client tool's call) is
 * answered by running what the engine left waiting. Either way the answer is logged as
 * {@code input_resolved} once it has reached its asker. A deadline that passes first resolves the input
 * EXPIRED (the store decides which comes first) and tells the asker. Thread-safe.
 */
final class RunInputs {
    private static final Logger log = LoggerFactory.getLogger(RunInputs.class);

    /** What the engine does once an input it asked for itself is resolved. Runs on a worker, guarded. */
    interface Continuation {
        void answered(InputAnswer answer);

        void expired();
    }

    /** How soon a passed deadline is checked again while an answer to its input is being delivered. */
    private static final Duration RECHECK_WHILE_DELIVERING = Duration.ofSeconds(1);

    private final EngineContext ctx;
    private final ActiveRun run;
    private final Map<String, Continuation> askedByEngine = new ConcurrentHashMap<>();
    private final Map<String, ScheduledFuture<?>> deadlines = new ConcurrentHashMap<>();

    RunInputs(EngineContext ctx, ActiveRun run) {
        this.ctx = ctx;
        this.run = run;
    }

    /** Asks the person on the engine's behalf; {@code then} runs once the input is resolved. */
    void ask(AgentStreamEvent.InputRequested request, Continuation then) {
        askedByEngine.put(request.inputId(), then);
        run.ingest(request);
    }

    /**
     * After a restart: an input the engine asked before the host stopped, still pending in the store, is
     * waited for again without asking it again; {@code then} runs once it is resolved.
     */
    void awaitAgain(String inputId, Continuation then) {
        askedByEngine.put(inputId, then);
    }

    /** An input was logged: its deadline, if any, starts. */
    void requested(String inputId, @Nullable Instant deadline) {
        if (deadline == null) {
            return;
        }
        long delay = Math.max(0, Duration.between(ctx.now(), deadline).toMillis());
        deadlines.computeIfAbsent(inputId, id -> ctx.timers.schedule(() -> run.guarded(() -> expire(id)), delay,
                TimeUnit.MILLISECONDS));
    }

    /**
     * Hands an accepted answer to whoever asked: the runtime, through its call for the kind, or the engine.
     * Called holding the run's order lock, so nothing the runtime does after the answer is logged before it.
     *
     * @throws ChatException UNSUPPORTED if the runtime cannot take answers of this kind; whatever the
     *     runtime throws
     */
    void deliver(PendingInput input, InputAnswer answer) {
        Continuation then = askedByEngine.remove(input.inputId());
        if (then == null) {
            toRuntime(input, answer);
        }
        cancelDeadline(input.inputId());
        run.ingest(new AgentStreamEvent.InputResolved(input.inputId(), AgentStreamEvent.InputOutcome.ANSWERED, answer));
        if (then != null) {
            resume(() -> then.answered(answer));
        }
    }

    private void toRuntime(PendingInput input, InputAnswer answer) {
        String runId = run.runId();
        if (answer instanceof ClarifyAnswer clarify) {
            requireCapability(Capability.CLARIFY, "clarify answers");
            ctx.runtime.answerClarify(new ClarifyReply(runId, input.inputId(), clarify.answer()));
        } else if (answer instanceof ApprovalAnswer approval) {
            requireCapability(Capability.APPROVALS, "approval decisions");
            ctx.runtime.answerApproval(new ApprovalReply(runId, input.inputId(), approval.decision(),
                    approval.editedArguments()));
        } else if (answer instanceof ClientToolAnswer result && input.request() instanceof ClientToolRequest call) {
            requireCapability(Capability.HOST_TOOLS, "tool results");
            ctx.runtime.submitToolResult(new ToolResult(runId, call.executionId(), result.result(), result.error()));
        }
    }

    private void requireCapability(Capability capability, String what) {
        if (!ctx.can(capability)) {
            throw ChatException.unsupported("this runtime cannot take " + what);
        }
    }

    /**
     * The deadline passed: unless an answer came first (the store decides), the input expires. While an
     * accepted answer is still on its way (the store holds it, the run has not logged it), the deadline is
     * checked again shortly: the delivery may fail and the answer be taken back.
     */
    private void expire(String inputId) {
        deadlines.remove(inputId);
        if (!run.isInputPending(inputId)) {
            return;
        }
        boolean expired;
        try {
            expired = StoreRetry.call(() -> ctx.store.closeInput(run.runId(), inputId, InputState.EXPIRED, ctx.now()));
        } catch (RuntimeException e) {
            log.warn("Run {}: input {} could not be marked expired; trying again shortly", run.runId(), inputId, e);
            requested(inputId, ctx.now().plusSeconds(5));
            return;
        }
        if (!expired) {
            if (ctx.store.findInput(run.runId(), inputId).map(PendingInput::state).orElse(null) == InputState.ANSWERED
                    && run.isInputPending(inputId)) {
                // An answer is being delivered: if it fails, it is taken back and the deadline must still hold.
                requested(inputId, ctx.now().plus(RECHECK_WHILE_DELIVERING));
            }
            return;
        }
        run.ingest(new AgentStreamEvent.InputResolved(inputId, AgentStreamEvent.InputOutcome.EXPIRED, null));
        Continuation then = askedByEngine.remove(inputId);
        if (then != null) {
            resume(then::expired);
            return;
        }
        try {
            ctx.runtime.inputExpired(run.runId(), inputId);
        } catch (ChatException e) {
            if (e.code() != ErrorCode.UNSUPPORTED) {
                throw e;
            }
            run.forceEnd(RunStatus.CANCELLED, "input " + inputId + " expired and the runtime cannot go on without it");
        }
    }

    private void resume(Runnable work) {
        try {
            ctx.work.execute(() -> run.guarded(work));
        } catch (RuntimeException e) {
            run.guarded(work);
        }
    }

    private void cancelDeadline(String inputId) {
        ScheduledFuture<?> timer = deadlines.remove(inputId);
        if (timer != null) {
            timer.cancel(false);
        }
    }

    /** The run ended: no deadline fires, nothing the engine asked waits any more. */
    void close() {
        deadlines.values().forEach(timer -> timer.cancel(false));
        deadlines.clear();
        askedByEngine.clear();
    }
}
