package dev.parley.chat.engine.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.cluster.ControlMessage;
import dev.parley.chat.cluster.RunCoordinator;
import dev.parley.chat.engine.AnswerResult;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.Run;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What this instance does with the other instances of the engine on the same store: it renews its runs'
 * leases and lets go of runs another instance took over, takes over runs whose holder stopped renewing,
 * acts on the control messages and progress notices it receives, and asks the holder of a run to deliver
 * an answer that was stored here. Thread-safe: called by API callers, the engine's timers and the
 * coordinator's listener thread.
 */
final class ClusterDuties {
    private static final Logger log = LoggerFactory.getLogger(ClusterDuties.class);

    private final EngineContext ctx;
    private final RunRecovery recovery;
    /** Frees the threads of runs this instance lets go, cancels and takes answers back on its one path. */
    private final RunManager manager;
    private final Map<String, CompletableFuture<ControlMessage>> pendingReplies = new ConcurrentHashMap<>();
    /** When this instance last renewed its leases (epoch ms); touched by the timer thread only. */
    private long lastRenewal;
    /** Orders the renewals and the closing engine's release (after which nothing is renewed). */
    private final Object leaseLock = new Object();
    private boolean leasesReleased;

    ClusterDuties(EngineContext ctx, RunRecovery recovery, RunManager manager) {
        this.ctx = ctx;
        this.recovery = recovery;
        this.manager = manager;
        this.lastRenewal = ctx.clock.millis();
    }

    /**
     * Starts listening to the other instances and, when there may be some, renewing this instance's leases
     * and taking over runs whose holder stopped renewing (its runs become INTERRUPTED, or are re-attached or
     * queued again, exactly as after a restart).
     */
    void start() {
        ctx.coordinator.start(new CoordinatorListener());
        if (!ctx.clustered()) {
            return;
        }
        long renew = Math.max(1, ctx.leaseTimeout.toMillis() / 3);
        long reap = Math.max(1, ctx.leaseTimeout.toMillis() / 2);
        ctx.timers.scheduleWithFixedDelay(this::renewLeases, renew, renew, TimeUnit.MILLISECONDS);
        ctx.timers.scheduleWithFixedDelay(this::reapExpired, reap, reap, TimeUnit.MILLISECONDS);
    }

    private void renewLeases() {
        synchronized (leaseLock) {
            if (!leasesReleased) {
                renewHeldLeases();
            }
        }
    }

    /**
     * The closing engine gives up the leases of these runs, so that another instance takes them over at once
     * rather than after the lease timeout. No renewal runs after it (one under way is waited for).
     */
    void releaseLeases(List<String> runIds) {
        synchronized (leaseLock) {
            leasesReleased = true;
            if (runIds.isEmpty()) {
                return;
            }
            try {
                ctx.store.leaseRuns(ctx.coordinator.instanceId(), runIds, ctx.now().minusMillis(1));
            } catch (RuntimeException e) {
                log.warn("Releasing the leases of runs this instance let go failed; they expire anyway", e);
            }
        }
    }

    private void renewHeldLeases() {
        Set<String> mine = new HashSet<>(ctx.activeRuns.keySet());
        try {
            Set<String> held = mine.isEmpty() ? Set.of()
                    : ctx.store.leaseRuns(ctx.coordinator.instanceId(), mine, ctx.leaseEnd());
            lastRenewal = ctx.clock.millis();
            for (String runId : mine) {
                if (!held.contains(runId)) {
                    letGo(runId, "another instance took it over (this one's lease lapsed)");
                }
            }
        } catch (RuntimeException e) {
            if (ctx.clock.millis() - lastRenewal > ctx.leaseTimeout.toMillis()) {
                log.error("Run leases could not be renewed for longer than the lease timeout; letting this instance's "
                        + "runs go, other instances take them over", e);
                mine.forEach(runId -> letGo(runId, "its lease could not be renewed"));
            } else {
                log.warn("Renewing run leases failed; will retry", e);
            }
        }
    }

    /** Stops holding a run another instance owns (or will own) now, without storing anything more for it. */
    void letGo(String runId, String why) {
        ActiveRun run = ctx.activeRuns.get(runId);
        if (run == null || run.isAbandoned()) {
            return;
        }
        log.warn("Run {}: letting it go, {}", runId, why);
        run.abandon();
        ctx.activeRuns.remove(runId, run);
        manager.releaseLane(run);
    }

    /** Takes over the runs whose lease expired (their holder stopped renewing), each recovered as after a restart. */
    void reapExpired() {
        if (ctx.isClosed()) {
            return;
        }
        try {
            for (Run run : ctx.store.findRunsWithExpiredLease(ctx.now())) {
                if (ctx.activeRuns.containsKey(run.id())) {
                    continue;
                }
                if (ctx.store.takeOverRun(run.id(), ctx.coordinator.instanceId(), ctx.now(), ctx.leaseEnd())) {
                    log.info("Run {} lost its host (its lease expired); taking it over", run.id());
                    try {
                        recovery.recoverOne(run);
                    } catch (RuntimeException e) {
                        log.error("Run {} could not be taken over", run.id(), e);
                    }
                }
            }
        } catch (RuntimeException e) {
            log.warn("Looking for runs whose host stopped failed; will retry", e);
        }
    }

    /** Acts on what other instances say. */
    private final class CoordinatorListener implements RunCoordinator.Listener {
        @Override
        public void onProgress(String runId, long lastSeq) {
            Set<LiveSubscription> waiting = ctx.remoteTails.get(runId);
            if (waiting != null) {
                waiting.forEach(LiveSubscription::wake);
            }
        }

        @Override
        public void onControl(ControlMessage message) {
            if (message.kind() == ControlMessage.Kind.REPLY) {
                CompletableFuture<ControlMessage> waiting = pendingReplies.get(message.correlationId());
                if (waiting != null) {
                    waiting.complete(message);
                }
                return;
            }
            ActiveRun active = ctx.activeRuns.get(message.runId());
            if (active == null || ctx.isClosed()) {
                return;
            }
            executeQuietly(() -> {
                if (message.kind() == ControlMessage.Kind.CANCEL) {
                    manager.cancelHere(active);
                } else {
                    deliverStoredAnswer(active, message);
                }
            });
        }

        @Override
        public void onResync() {
            ctx.remoteTails.values().forEach(waiting -> waiting.forEach(LiveSubscription::wake));
        }
    }

    /**
     * Runs work a coordinator's message asks for on a worker. A closing engine refuses it: the message is
     * dropped (the run goes to another instance), never thrown back into the coordinator's listener thread.
     */
    private void executeQuietly(Runnable work) {
        try {
            ctx.work.execute(work);
        } catch (java.util.concurrent.RejectedExecutionException closing) {
            log.debug("A control message arrived while the engine closes; dropped");
        }
    }

    /**
     * Delivers an answer another instance accepted and stored, and replies with the outcome. An input this
     * run resolved before is not delivered again ({@link ControlMessage#ALREADY_ANSWERED}). A delivery that
     * succeeds marks the input answered again, in case the asking instance gave up waiting and reopened it.
     */
    private void deliverStoredAnswer(ActiveRun active, ControlMessage request) {
        String failure = null;
        try {
            String inputId = request.inputId();
            PendingInput input = inputId == null ? null : ctx.store.findInput(active.runId(), inputId).orElse(null);
            if (input == null || input.state() != InputState.ANSWERED || input.answer() == null) {
                failure = "no stored answer for input " + inputId;
            } else if (active.deliverAnswer(input, input.answer()) == ActiveRun.Delivery.ALREADY_ANSWERED) {
                failure = ControlMessage.ALREADY_ANSWERED;
            } else {
                markAnsweredAgain(active.runId(), input);
            }
        } catch (RuntimeException e) {
            failure = e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
        }
        ctx.coordinator.send(request.reply(ctx.coordinator.instanceId(), failure));
    }

    private void markAnsweredAgain(String runId, PendingInput delivered) {
        try {
            if (ctx.store.answerInput(runId, delivered.inputId(), delivered.answer(), ctx.now())
                    == dev.parley.chat.store.AnswerOutcome.CONFLICT) {
                log.warn("Run {}: input {} was delivered, but the store holds another answer or state for it", runId,
                        delivered.inputId());
            }
        } catch (RuntimeException e) {
            log.warn("Run {}: input {} was delivered, but could not be marked answered again", runId,
                    delivered.inputId(), e);
        }
    }

    /** A replayed answer stays stored: it may have reached the runtime before; a retry asks the holder again. */
    private void takeBackUnlessReplayed(Run run, String inputId, boolean replayed) {
        if (!replayed) {
            manager.takeBackAnswer(run.id(), inputId, null);
        }
    }

    /**
     * Has the instance holding the run deliver the answer this instance stored, and waits for its reply.
     * Without a reply in time the answer is taken back (the person may try again; should the holder deliver
     * it late after all, it marks it answered again and refuses the retry).
     *
     * @param replayed the same answer was stored before: the holder delivers it only if its run still waits
     *     for it (REPLAYED either way)
     */
    AnswerResult answerElsewhere(Run run, String inputId, boolean replayed) {
        ControlMessage request = new ControlMessage(ControlMessage.Kind.ANSWER, run.id(), UUID.randomUUID().toString(),
                ctx.coordinator.instanceId(), inputId, null);
        CompletableFuture<ControlMessage> reply = new CompletableFuture<>();
        pendingReplies.put(request.correlationId(), reply);
        try {
            ctx.coordinator.send(request);
            ControlMessage outcome = reply.get(ctx.controlTimeout.toMillis(), TimeUnit.MILLISECONDS);
            if (ControlMessage.ALREADY_ANSWERED.equals(outcome.error())) {
                if (replayed) {
                    return AnswerResult.REPLAYED;
                }
                throw ChatException.conflict("the input was already answered");
            }
            if (outcome.error() != null) {
                takeBackUnlessReplayed(run, inputId, replayed);
                throw new ChatException(ErrorCode.RUNTIME_UNAVAILABLE,
                        "the answer could not reach the runtime: " + outcome.error());
            }
            return replayed ? AnswerResult.REPLAYED : AnswerResult.ACCEPTED;
        } catch (TimeoutException e) {
            takeBackUnlessReplayed(run, inputId, replayed);
            throw new ChatException(ErrorCode.RUNTIME_UNAVAILABLE,
                    "no instance holding the run took the answer in time; try again");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            takeBackUnlessReplayed(run, inputId, replayed);
            throw new ChatException(ErrorCode.INTERNAL, "interrupted while delivering the answer");
        } catch (ExecutionException e) {
            takeBackUnlessReplayed(run, inputId, replayed);
            throw new ChatException(ErrorCode.INTERNAL, "delivering the answer failed", e.getCause());
        } finally {
            pendingReplies.remove(request.correlationId());
        }
    }
}
