package dev.parley.chat.engine.internal;

import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.Capability;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ends the runs this engine stops following and nobody can follow again (after a restart, or when it
 * closes): each is stopped in the runtime first ({@link dev.parley.chat.runtime.RuntimeAdapter#stopOrphan},
 * with the last token its stream reported, which may name it there), then it ends INTERRUPTED. Otherwise the
 * runtime finishes the turn unseen, and the next turn builds on an answer the thread shows cut off. A runtime
 * without {@link Capability#CANCEL}, or a stop that fails, leaves the end as it is (the failure is logged).
 * Stateless; thread-safe.
 */
final class OrphanStops {
    private static final Logger log = LoggerFactory.getLogger(OrphanStops.class);

    private OrphanStops() {
    }

    /**
     * A run recovered from the store: stopped, then ended, on a worker (the runtime may be slow; the run holds
     * its thread meanwhile). A stop that takes longer than the cancel grace period does not hold the run: it
     * ends regardless (the first of the two ends counts).
     */
    static void stopThenInterrupt(EngineContext ctx, ActiveRun run, @Nullable String resumeToken, String reason) {
        if (!ctx.can(Capability.CANCEL)) {
            run.forceEnd(RunStatus.INTERRUPTED, reason);
            return;
        }
        try {
            ScheduledFuture<?> deadline = ctx.timers.schedule(() -> run.guarded(() -> {
                log.warn("Run {}: stopping it in the runtime took longer than {}; ending it regardless", run.runId(),
                        ctx.limits.cancelGracePeriod());
                run.forceEnd(RunStatus.INTERRUPTED, reason);
            }), ctx.limits.cancelGracePeriod().toMillis(), TimeUnit.MILLISECONDS);
            ctx.work.execute(() -> run.guarded(() -> {
                stop(ctx, run.runId(), resumeToken);
                deadline.cancel(false);
                run.forceEnd(RunStatus.INTERRUPTED, reason);
            }));
        } catch (RuntimeException e) {
            log.warn("Run {}: no worker to stop it in the runtime; ending it regardless", run.runId());
            run.forceEnd(RunStatus.INTERRUPTED, reason);
        }
    }

    /**
     * Runs of a closing engine, whose streams are no longer followed: all stopped at once, waiting at most
     * the cancel grace period, then each ended.
     */
    static void stopAllThenInterrupt(EngineContext ctx, List<ActiveRun> runs, String reason) {
        if (!runs.isEmpty() && ctx.can(Capability.CANCEL)) {
            List<CompletableFuture<Void>> stops = new ArrayList<>();
            for (ActiveRun run : runs) {
                String token = run.resumeToken();
                Runnable stop = () -> stop(ctx, run.runId(), token);
                try {
                    stops.add(CompletableFuture.runAsync(stop, ctx.work));
                } catch (RuntimeException e) {
                    stops.add(CompletableFuture.runAsync(stop));
                }
            }
            try {
                CompletableFuture.allOf(stops.toArray(new CompletableFuture<?>[0]))
                        .get(ctx.limits.cancelGracePeriod().toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                log.warn("Stopping {} run(s) in the runtime took longer than {}; ending them regardless", runs.size(),
                        ctx.limits.cancelGracePeriod());
            } catch (ExecutionException e) {
                log.warn("Stopping runs in the runtime failed; ending them regardless", e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        runs.forEach(run -> run.forceEnd(RunStatus.INTERRUPTED, reason));
    }

    private static void stop(EngineContext ctx, String runId, @Nullable String resumeToken) {
        try {
            ctx.runtime.stopOrphan(runId, resumeToken);
        } catch (RuntimeException e) {
            log.warn("Run {}: the runtime could not be told to stop it ({}); it may finish there unseen", runId,
                    ActiveRun.message(e));
        }
    }
}
