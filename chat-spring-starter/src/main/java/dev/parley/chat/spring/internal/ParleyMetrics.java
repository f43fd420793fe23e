package dev.parley.chat.spring.internal;

import dev.parley.chat.engine.EngineListener;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.Run;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * Micrometer meters for the engine: {@code parley.runs.active} (gauge), {@code parley.runs.finished}
 * (counter tagged {@code outcome}), {@code parley.events.relayed} (counter), {@code parley.subscribers.open}
 * (gauge) and {@code parley.sse.streams.open} (gauge).
 */
public final class ParleyMetrics implements EngineListener {
    private final MeterRegistry registry;
    private final Set<String> activeRuns = ConcurrentHashMap.newKeySet();
    private final AtomicInteger subscribers = new AtomicInteger();
    private final Counter events;
    private final Map<String, Counter> outcomes = new ConcurrentHashMap<>();

    public ParleyMetrics(MeterRegistry registry, Supplier<Number> openSseStreams) {
        this.registry = registry;
        Gauge.builder("parley.runs.active", activeRuns, Set::size)
                .description("Runs working or waiting for input in this process").strongReference(true).register(registry);
        Gauge.builder("parley.subscribers.open", subscribers, AtomicInteger::get)
                .description("Subscribers attached to runs' events").strongReference(true).register(registry);
        Gauge.builder("parley.sse.streams.open", openSseStreams, s -> s.get().doubleValue())
                .description("Open SSE streams").strongReference(true).register(registry);
        this.events = Counter.builder("parley.events.relayed").description("Run events logged and relayed")
                .register(registry);
    }

    @Override
    public void runStarted(Run run) {
        activeRuns.add(run.id());
    }

    @Override
    public void runFinished(Run run) {
        activeRuns.remove(run.id());
        outcomes.computeIfAbsent(run.status().name(), outcome -> Counter.builder("parley.runs.finished")
                .description("Runs that ended, by outcome").tag("outcome", outcome).register(registry)).increment();
    }

    @Override
    public void eventAppended(RunEvent event) {
        events.increment();
    }

    @Override
    public void subscriberOpened(String runId) {
        subscribers.incrementAndGet();
    }

    @Override
    public void subscriberClosed(String runId) {
        subscribers.decrementAndGet();
    }
}
