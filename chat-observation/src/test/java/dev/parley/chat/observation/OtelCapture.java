package dev.parley.chat.observation;

import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.util.List;
import java.util.Optional;

/**
 * An observation registry wired to OpenTelemetry through Micrometer's bridge, as a Spring Boot application with
 * OpenTelemetry tracing has it, exporting finished spans to memory.
 */
final class OtelCapture implements AutoCloseable {
    final InMemorySpanExporter exporter = InMemorySpanExporter.create();
    final ObservationRegistry registry = ObservationRegistry.create();
    private final SdkTracerProvider provider = SdkTracerProvider.builder()
            .addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
    final OtelTracer tracer;
    final OtelPropagator propagator;

    OtelCapture() {
        io.opentelemetry.api.trace.Tracer otel = provider.get("parley-test");
        OtelCurrentTraceContext current = new OtelCurrentTraceContext();
        tracer = new OtelTracer(otel, current, event -> {
        }, new OtelBaggageManager(current, List.of(), List.of()));
        propagator = new OtelPropagator(
                ContextPropagators.create(W3CTraceContextPropagator.getInstance()), otel);
        registry.observationConfig().observationHandler(new ObservationHandler.FirstMatchingCompositeObservationHandler(
                new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
                new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
                new DefaultTracingObservationHandler(tracer)));
    }

    List<SpanData> spans() {
        return exporter.getFinishedSpanItems();
    }

    /** The one finished span named {@code name}. */
    SpanData span(String name) {
        List<SpanData> named = spans().stream().filter(s -> s.getName().equals(name)).toList();
        if (named.size() != 1) {
            throw new AssertionError("expected one span named " + name + ", got " + spans().stream().map(SpanData::getName).toList());
        }
        return named.get(0);
    }

    Optional<SpanData> parentOf(SpanData span) {
        return spans().stream().filter(s -> s.getSpanId().equals(span.getParentSpanId())).findFirst();
    }

    @Override
    public void close() {
        provider.close();
    }
}
