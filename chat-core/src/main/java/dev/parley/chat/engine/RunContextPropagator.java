package dev.parley.chat.engine;

import dev.parley.chat.model.Run;

/**
 * Carries the context of the thread that starts a run (a trace, a logging context) to the thread the run is
 * launched on, where the engine calls the runtime. Tracing-agnostic: the engine only calls it; an
 * implementation (such as Parley's Micrometer module) decides what a context is.
 *
 * <p>Contract: {@link #capture} is called on the caller's thread once a new run is stored (by
 * {@code startRun}, {@code regenerate} and the other calls that start a run), before they return;
 * {@link Captured#open} is called on the engine's worker thread right before the run is launched (at once,
 * or later for a queued run) and the scope is closed when the launch returns. A run that never launches
 * (cancelled while queued, the engine closed) has its capture dropped without being opened. A run the engine
 * recovers after a restart or takes over from another instance is captured on the thread that recovers it, where
 * no caller's context is current (a tracing propagator starts a trace of its own there), and opened around the
 * call that follows it again in the runtime (around its launch, for a queued one).
 * Both calls must be fast; whatever they throw is logged and ignored (the run goes on without the context).
 */
@FunctionalInterface
public interface RunContextPropagator {
    /** Carries nothing (the default). */
    RunContextPropagator NONE = run -> Captured.NOTHING;

    /** Captures the calling thread's context for {@code run}, which is about to be launched. */
    Captured capture(Run run);

    /** A captured context. */
    @FunctionalInterface
    interface Captured {
        /** Restores nothing. */
        Captured NOTHING = () -> Scope.NOTHING;

        /** Makes the captured context current on the calling thread until the scope closes. */
        Scope open();
    }

    /** An open context; closing it restores what the thread had before. */
    @FunctionalInterface
    interface Scope extends AutoCloseable {
        /** Closes nothing. */
        Scope NOTHING = () -> {
        };

        @Override
        void close();
    }
}
