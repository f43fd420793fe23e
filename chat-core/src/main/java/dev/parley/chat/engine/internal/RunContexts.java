package dev.parley.chat.engine.internal;

import dev.parley.chat.engine.RunContextPropagator;
import dev.parley.chat.model.Run;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The contexts captured when runs were started, kept until each run launches (see
 * {@link RunContextPropagator}). Whatever the propagator throws is logged and ignored. Thread-safe.
 */
final class RunContexts {
    private static final Logger log = LoggerFactory.getLogger(RunContexts.class);

    private final RunContextPropagator propagator;
    private final Map<String, RunContextPropagator.Captured> captured = new ConcurrentHashMap<>();

    RunContexts(RunContextPropagator propagator) {
        this.propagator = propagator;
    }

    /**
     * On the caller's thread: captures its context for the run about to launch.
     *
     * @return the headers to keep with the run (empty for none)
     */
    Map<String, String> capture(Run run) {
        if (propagator == RunContextPropagator.NONE) {
            return Map.of();
        }
        try {
            RunContextPropagator.Captured context = propagator.capture(run);
            captured.put(run.id(), context);
            return context.headers();
        } catch (RuntimeException e) {
            log.warn("Run {}: capturing the caller's context failed; the run goes on without it", run.id(), e);
            return Map.of();
        }
    }

    /** On the recovering thread: the context of a run followed again, given the headers its start kept. */
    void resume(Run run, Map<String, String> startHeaders) {
        if (propagator == RunContextPropagator.NONE) {
            return;
        }
        try {
            captured.put(run.id(), propagator.resume(run, startHeaders));
        } catch (RuntimeException e) {
            log.warn("Run {}: its context could not be restored; it goes on without it", run.id(), e);
        }
    }

    /** Whether a propagator is set (else there are never headers to keep or read). */
    boolean active() {
        return propagator != RunContextPropagator.NONE;
    }

    /** Wraps the run's launch in its captured context (once; a run launched again gets none). */
    Runnable wrap(String runId, Runnable launch) {
        RunContextPropagator.Captured context = captured.remove(runId);
        if (context == null) {
            return launch;
        }
        return () -> {
            RunContextPropagator.Scope scope = open(runId, context);
            try {
                launch.run();
            } finally {
                close(runId, scope);
            }
        };
    }

    /** Drops what was captured for a run that ended (it may never have launched). */
    void drop(String runId) {
        captured.remove(runId);
    }

    private static RunContextPropagator.Scope open(String runId, RunContextPropagator.Captured context) {
        try {
            return context.open();
        } catch (RuntimeException e) {
            log.warn("Run {}: restoring the caller's context failed; the run goes on without it", runId, e);
            return RunContextPropagator.Scope.NOTHING;
        }
    }

    private static void close(String runId, RunContextPropagator.Scope scope) {
        try {
            scope.close();
        } catch (RuntimeException e) {
            log.warn("Run {}: closing the caller's context failed", runId, e);
        }
    }
}
