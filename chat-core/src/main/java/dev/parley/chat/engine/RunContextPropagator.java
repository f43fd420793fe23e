package dev.parley.chat.engine;

import dev.parley.chat.model.Run;
import java.util.Map;

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
 * recovers after a restart or takes over from another instance gets its context from {@link #resume}, on the
 * thread that recovers it, and it is opened around the call that follows the run again in the runtime (around
 * its launch, for a queued one). So that such a run can be linked to the context it was started in, the engine
 * keeps what {@link Captured#headers} gives with the run ({@code ChatStore.saveStartContext}, a store write on
 * the starting caller's thread when there is something to keep) and hands it to {@link #resume}.
 * Both calls must be fast; whatever they throw is logged and ignored (the run goes on without the context).
 */
@FunctionalInterface
public interface RunContextPropagator {
    /** Carries nothing (the default). */
    RunContextPropagator NONE = run -> Captured.NOTHING;

    /** Captures the calling thread's context for {@code run}, which is about to be launched. */
    Captured capture(Run run);

    /**
     * The context of a run this engine follows again after a restart or takes over, called on the recovering
     * thread (no caller's context is current there). {@code startHeaders} is what its start's
     * {@link Captured#headers} gave, empty when nothing was kept. The default captures as for a new run.
     */
    default Captured resume(Run run, Map<String, String> startHeaders) {
        return capture(run);
    }

    /** A captured context. */
    @FunctionalInterface
    interface Captured {
        /** Restores nothing. */
        Captured NOTHING = () -> Scope.NOTHING;

        /** Makes the captured context current on the calling thread until the scope closes. */
        Scope open();

        /**
         * The captured context as headers to keep with the run (W3C trace headers, say), for {@link #resume}
         * if the run is followed again elsewhere or later; empty (the default) keeps nothing.
         */
        default Map<String, String> headers() {
            return Map.of();
        }
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
