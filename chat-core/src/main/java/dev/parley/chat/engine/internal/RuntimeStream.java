package dev.parley.chat.engine.internal;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.runtime.BurstAwareSubscriber;
import dev.parley.chat.runtime.ResumableSubscriber;
import java.util.concurrent.Flow;

/**
 * Feeds the runtime's stream into one run. Every signal is guarded: whatever fails while handling it ends
 * the run. Signals arrive on the runtime's threads, one at a time (Reactive Streams). A clarify's older
 * events are logged in their current form ({@link AgentStreamEvent#current}); answers are logged by the
 * engine, never taken from the runtime, and the runtime's report that an input ended is logged only while
 * the input is still pending (the engine may have expired it already). Inside a runtime's burst the run
 * wakes its subscribers once, at the burst's end, rather than once per event.
 *
 * <p>The stream's resume points are kept with the run ({@link ActiveRun#resumePoint}); every item counts
 * towards them, logged or not. The first items of a re-attached stream that the log holds already are
 * skipped before anything else looks at them — never a terminal item: the log of a run still followed holds none,
 * so a terminal item (a runtime that no longer knows the run ends it at once) is the run's end.
 */
final class RuntimeStream implements BurstAwareSubscriber<AgentStreamEvent>, ResumableSubscriber<AgentStreamEvent> {
    private final EngineContext ctx;
    private final ActiveRun run;

    RuntimeStream(EngineContext ctx, ActiveRun run) {
        this.ctx = ctx;
        this.run = run;
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {
        if (!run.attachUpstream(subscription)) {
            return;
        }
        run.guarded(() -> {
            subscription.request(Long.MAX_VALUE);
            if (run.isCancelRequested()) {
                run.cancel();
            }
        });
    }

    @Override
    public void onNext(AgentStreamEvent signalled) {
        if (run.isDetached() || !signalled.isTerminal() && run.isStoredRuntimeItem()) {
            return;
        }
        AgentStreamEvent event = AgentStreamEvent.current(signalled);
        if (event instanceof AgentStreamEvent.RunStarted || event instanceof AgentStreamEvent.Unknown
                || event instanceof AgentStreamEvent.InputResolved resolved
                        && (resolved.outcome() == AgentStreamEvent.InputOutcome.ANSWERED
                                || !run.isInputPending(resolved.inputId()))) {
            run.runtimeItemLeftOut();
            return;
        }
        run.guarded(() -> {
            if (run.ingestFromRuntime(event) != null && event instanceof AgentStreamEvent.InputResolved withdrawn) {
                run.inputClosedByRuntime(withdrawn);
            }
            if (ctx.writer.isBacklogged()) {
                run.log().showHeld();
                ctx.writer.awaitCapacity();
            }
        });
    }

    @Override
    public void onResumePoint(String resumeToken) {
        if (!run.isDetached()) {
            run.guarded(() -> run.resumePoint(resumeToken));
        }
    }

    @Override
    public void onBurstStart() {
        run.log().holdSignals();
    }

    @Override
    public void onBurstEnd() {
        run.log().releaseSignals();
    }

    @Override
    public void onError(Throwable error) {
        if (!run.isDetached()) {
            run.guarded(() -> run.fail(error));
        }
    }

    @Override
    public void onComplete() {
        if (!run.isDetached()) {
            run.guarded(() -> run.end(new AgentStreamEvent.RunFailed("RUNTIME_FAILED",
                    "the runtime's stream ended without a final event")));
        }
    }
}
