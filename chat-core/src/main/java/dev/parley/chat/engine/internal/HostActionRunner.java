package dev.parley.chat.engine.internal;

import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionCall;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.runtime.ToolResult;
import dev.parley.chat.store.HostActionRecord;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the host actions one run's agent calls, on the engine's workers: once per execution id (claimed in
 * the store), with the result logged and handed back to the runtime. Thread-safe.
 */
final class HostActionRunner {
    private static final Logger log = LoggerFactory.getLogger(HostActionRunner.class);

    private final EngineContext ctx;
    private final ActiveRun run;

    HostActionRunner(EngineContext ctx, ActiveRun run) {
        this.ctx = ctx;
        this.run = run;
    }

    /** The agent finished calling {@code call}: runs it on a worker if it names a host action. */
    void called(ActionExecutionMessage call) {
        HostAction action = ctx.hostActions.get(call.name());
        if (action == null) {
            return;
        }
        try {
            ctx.work.execute(() -> run.guarded(() -> execute(call, action)));
        } catch (RejectedExecutionException e) {
            returnResult(call, "host action " + call.name() + " could not run: the engine is too busy", true);
        }
    }

    /**
     * Without a claim in the store the handler does not run (it might run twice) and the runtime gets an
     * error result; a result whose record cannot be stored still goes back (it is in the run's event log).
     */
    private void execute(ActionExecutionMessage call, HostAction action) {
        String runId = run.runId();
        HostActionRecord record;
        try {
            record = StoreRetry.call(() -> ctx.store.claimHostAction(runId, call.executionId(), call.name(),
                    call.arguments(), ctx.now()));
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
            String value = action.handler().handle(new HostActionCall(run.threadId(), runId, run.snapshot().ownerId(),
                    call.executionId(), call.name(), call.arguments()));
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

    private void returnResult(ActionExecutionMessage call, String result, boolean error) {
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
