package dev.parley.chat.observation;

import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.engine.EngineListener;
import dev.parley.chat.engine.RunContextPropagator;
import dev.parley.chat.observation.internal.ObservedModelClient;
import dev.parley.chat.observation.internal.RunTraces;
import io.micrometer.observation.ObservationRegistry;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * Parley's runs as Micrometer observations. Hand its parts to the engine and the runtime:
 *
 * <pre>{@code
 * RunObservations observations = new RunObservations(registry, ObservationSettings.of("agent-loop"));
 * AgentLoopRuntime runtime = AgentLoopRuntime.builder()
 *         .modelClient(observations.modelClient(client, "openai"))
 *         .executor(observations.executor(Executors.newCachedThreadPool()))
 *         .build();
 * ChatEngine engine = ChatEngine.builder().runtime(runtime).store(store)
 *         .listener(observations.engineListener())
 *         .contextPropagator(observations.contextPropagator())
 *         .build();
 * }</pre>
 *
 * <p>Each run is a {@value ParleyObservations#RUN} observation from its launch to its end, a child of the
 * observation current where it was started (the HTTP request's, in a web application); under it each tool
 * call is a {@value ParleyObservations#TOOL_CALL}, each wait for a person a {@value
 * ParleyObservations#INPUT_WAIT} (under the tool call it is about), and each model call of the agent loop a
 * {@value ParleyObservations#MODEL_CALL}. Key names are in {@link ParleyObservations}. With
 * {@link ObservationRegistry#NOOP} nothing is recorded. Thread-safe; one per engine.
 */
public final class RunObservations {
    private final ObservationRegistry registry;
    private final RunTraces traces;

    public RunObservations(ObservationRegistry registry, ObservationSettings settings) {
        this(registry, settings, Map::of);
    }

    /**
     * Runs that also keep the trace they were started in, so that a run followed again after a restart or taken
     * over by another instance continues that trace (as a child of the request that started it) instead of
     * starting one of its own. {@code startHeaders} gives the calling thread's trace headers —
     * {@link TraceHeaders#of TraceHeaders.of(tracer, propagator)} with Micrometer Tracing; the engine keeps them
     * with the run (one small store write per started run) and the registry's receiver handler reads them back.
     */
    public RunObservations(ObservationRegistry registry, ObservationSettings settings,
            Supplier<Map<String, String>> startHeaders) {
        this.registry = Objects.requireNonNull(registry, "registry");
        this.traces = new RunTraces(registry, Objects.requireNonNull(settings, "settings"),
                Objects.requireNonNull(startHeaders, "startHeaders"));
    }

    /** The engine listener that records runs, tool calls and waits ({@code ChatEngine.Builder.listener}). */
    public EngineListener engineListener() {
        return traces.listener();
    }

    /**
     * The propagator that makes a run's observation a child of the caller's and current on the run's launch
     * thread ({@code ChatEngine.Builder.contextPropagator}). Use it with {@link #engineListener()} of the same
     * instance.
     */
    public RunContextPropagator contextPropagator() {
        return traces.propagator();
    }

    /** {@code delegate} with every call observed; {@code provider} is the GenAI provider name ({@code openai}, …). */
    public ModelClient modelClient(ModelClient delegate, String provider) {
        return new ObservedModelClient(Objects.requireNonNull(delegate, "delegate"), registry,
                Objects.requireNonNull(provider, "provider"));
    }

    /**
     * Wraps a task so that it runs in the thread-local context (the current observation among it) of the
     * thread that wraps it: for the threads a runtime hands a run's work to (Hermes' {@code taskDecorator}).
     */
    public UnaryOperator<Runnable> taskDecorator() {
        return traces::decorate;
    }

    /** {@code executor} running each task in the context of the thread that submitted it (the agent loop's). */
    public Executor executor(Executor executor) {
        Objects.requireNonNull(executor, "executor");
        return task -> executor.execute(traces.decorate(task));
    }
}
