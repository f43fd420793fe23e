package dev.parley.chat.observation.internal;

import static dev.parley.chat.observation.ParleyObservations.OUTCOME;
import static dev.parley.chat.observation.ParleyObservations.STORE_EVENTS;
import static dev.parley.chat.observation.ParleyObservations.STORE_MESSAGES;
import static dev.parley.chat.observation.ParleyObservations.STORE_RUNS;
import static dev.parley.chat.observation.ParleyObservations.STORE_WRITE;

import dev.parley.chat.engine.EngineListener;
import dev.parley.chat.engine.RunContextPropagator;
import dev.parley.chat.engine.StoreWrite;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.observation.ObservationSettings;
import io.micrometer.context.ContextSnapshot;
import io.micrometer.context.ContextSnapshotFactory;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The live runs' traces, fed by the engine both through its {@link #listener()} (the run's events) and its
 * {@link #propagator()} (the caller's context at the start, made current around the launch).
 *
 * <p>A run started here gets its observation when it is captured, as a child of the caller's current
 * observation, and starts it at launch; its scope is open on the launch thread, so that what the runtime does
 * there (and on threads it hands work to through {@link #decorate}) is a child of the run. A run the engine
 * did not start here (recovered after a restart, taken over) gets an observation without a parent, open while
 * the engine follows it again in the runtime. Thread-safe.
 */
public final class RunTraces {
    private final ObservationRegistry registry;
    private final ObservationSettings settings;
    private final ContextSnapshotFactory snapshots = ContextSnapshotFactory.builder().build();
    private final Map<String, RunTrace> traces = new ConcurrentHashMap<>();
    private final Supplier<Map<String, String>> startHeaders;
    private final EngineListener listener = new Listener();
    private final RunContextPropagator propagator = new RunContextPropagator() {
        @Override
        public Captured capture(Run run) {
            return RunTraces.this.capture(run);
        }

        @Override
        public Captured resume(Run run, Map<String, String> kept) {
            return RunTraces.this.resume(run, kept);
        }
    };

    /** @param startHeaders the trace headers of the calling thread's span, kept with each run; empty for none */
    public RunTraces(ObservationRegistry registry, ObservationSettings settings,
            Supplier<Map<String, String>> startHeaders) {
        this.registry = registry;
        this.settings = settings;
        this.startHeaders = startHeaders;
    }

    /** The engine listener: distinct from {@link #propagator()}, so a container finds one bean of each type. */
    public EngineListener listener() {
        return listener;
    }

    /** The context propagator. */
    public RunContextPropagator propagator() {
        return propagator;
    }

    private RunContextPropagator.Captured capture(Run run) {
        if (registry.isNoop()) {
            return RunContextPropagator.Captured.NOTHING;
        }
        ContextSnapshot caller = snapshots.captureAll();
        RunTrace trace = traces.computeIfAbsent(run.id(),
                id -> new RunTrace(registry, settings, run, registry.getCurrentObservation(), Map.of()));
        return opening(caller, trace, headersHere());
    }

    /** A run followed again: a trace continuing the one its start kept the headers of, or one of its own. */
    private RunContextPropagator.Captured resume(Run run, Map<String, String> kept) {
        if (registry.isNoop()) {
            return RunContextPropagator.Captured.NOTHING;
        }
        RunTrace trace = traces.computeIfAbsent(run.id(), id -> new RunTrace(registry, settings, run, null, kept));
        return opening(snapshots.captureAll(), trace, Map.of());
    }

    private static RunContextPropagator.Captured opening(ContextSnapshot context, RunTrace trace,
            Map<String, String> headers) {
        return new RunContextPropagator.Captured() {
            @Override
            public RunContextPropagator.Scope open() {
                ContextSnapshot.Scope restored = context.setThreadLocals();
                trace.start();
                Observation.Scope scope = trace.observation().openScope();
                return () -> {
                    scope.close();
                    restored.close();
                };
            }

            @Override
            public Map<String, String> headers() {
                return headers;
            }
        };
    }

    /** The calling thread's trace headers, for the run to keep; empty when they cannot be had. */
    private Map<String, String> headersHere() {
        try {
            Map<String, String> headers = startHeaders.get();
            return headers == null ? Map.of() : Map.copyOf(headers);
        } catch (RuntimeException e) {
            return Map.of();
        }
    }

    /** A task that runs in the context of the thread that calls this (for threads a runtime hands work to). */
    public Runnable decorate(Runnable task) {
        return snapshots.captureAll().wrap(task);
    }

    private void started(Run run) {
        if (registry.isNoop()) {
            return;
        }
        traces.computeIfAbsent(run.id(), id -> new RunTrace(registry, settings, run, null, Map.of())).start();
    }

    private void appended(RunEvent logged) {
        RunTrace trace = traces.get(logged.runId());
        if (trace == null) {
            return;
        }
        AgentStreamEvent event = logged.event();
        if (event instanceof AgentStreamEvent.ToolCallStart start) {
            trace.toolStarted(start.executionId(), start.messageId(), start.name(), start.arguments());
        } else if (event instanceof AgentStreamEvent.ToolCallArgs args) {
            trace.toolArguments(args.executionId(), args.delta());
        } else if (event instanceof AgentStreamEvent.ToolCallResult result) {
            trace.toolFinished(result.executionId(), result.result(), result.error());
        } else if (event instanceof AgentStreamEvent.InputRequested requested) {
            trace.inputRequested(requested.inputId(), requested.messageId(), requested.request());
        } else if (event instanceof AgentStreamEvent.InputResolved resolved) {
            trace.inputResolved(resolved.inputId(), resolved.outcome().name());
        }
    }

    private void finished(Run run) {
        RunTrace trace = traces.remove(run.id());
        if (trace == null) {
            return;
        }
        trace.finished(run, failure(run));
    }

    /**
     * A {@code parley.store.write} observation per store write: a child of the run it writes when it writes one
     * traced run, else a root of its own (a flush shared by many runs belongs to none of them).
     */
    private EngineListener.WriteEnd writeStarted(StoreWrite write) {
        if (registry.isNoop()) {
            return EngineListener.WriteEnd.NOTHING;
        }
        RunTrace only = write.runIds().size() == 1 ? traces.get(write.runIds().get(0)) : null;
        Observation observation = Observation.createNotStarted(STORE_WRITE, registry)
                .contextualName("store_write")
                .parentObservation(only != null ? only.observation() : null)
                .highCardinalityKeyValue(STORE_RUNS, Integer.toString(write.runIds().size()))
                .highCardinalityKeyValue(STORE_EVENTS, Integer.toString(write.events()))
                .highCardinalityKeyValue(STORE_MESSAGES, Integer.toString(write.messages()))
                .start();
        return failure -> {
            observation.lowCardinalityKeyValue(OUTCOME, failure == null ? "success" : "error");
            if (failure != null) {
                observation.error(failure);
            }
            observation.stop();
        };
    }

    private static @Nullable Throwable failure(Run run) {
        if (run.status() != RunStatus.FAILED) {
            return null;
        }
        return run.error() != null ? new RunFailure(run.error().code(), run.error().message())
                : new RunFailure("FAILED", "the run failed");
    }

    private final class Listener implements EngineListener {
        @Override
        public void runStarted(Run run) {
            started(run);
        }

        @Override
        public void eventAppended(RunEvent event) {
            appended(event);
        }

        @Override
        public void runFinished(Run run) {
            finished(run);
        }

        @Override
        public WriteEnd storeWriteStarted(StoreWrite write) {
            return writeStarted(write);
        }
    }
}
