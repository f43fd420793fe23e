package dev.parley.chat.observation;

import io.micrometer.tracing.TraceContext;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.propagation.Propagator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * The trace headers (W3C {@code traceparent}, and {@code tracestate} or baggage where the propagator writes them)
 * of the span current on the calling thread, for a model library that takes extra headers per request. In the
 * agent loop, a model call's {@code chat <model>} span is current while the library starts its request, so the
 * model server's trace continues Parley's:
 *
 * <pre>{@code
 * OpenAiStreamingChatModel model = OpenAiStreamingChatModel.builder()
 *         .customHeaders(TraceHeaders.of(tracer, propagator))   // LangChain4j calls it before each request
 *         ...
 *         .build();
 * }</pre>
 *
 * <p>Needs Micrometer Tracing ({@code io.micrometer:micrometer-tracing}, which a Spring Boot application with
 * tracing has; the {@link Tracer} and {@link Propagator} are its beans). With no current span the headers are
 * empty. Thread-safe; {@link #get} is cheap and never throws.
 */
public final class TraceHeaders implements Supplier<Map<String, String>> {
    private final Tracer tracer;
    private final Propagator propagator;

    private TraceHeaders(Tracer tracer, Propagator propagator) {
        this.tracer = tracer;
        this.propagator = propagator;
    }

    /** Headers from {@code tracer}'s current span, written by {@code propagator}. */
    public static TraceHeaders of(Tracer tracer, Propagator propagator) {
        return new TraceHeaders(Objects.requireNonNull(tracer, "tracer"), Objects.requireNonNull(propagator, "propagator"));
    }

    /** The current span's trace headers; empty when no span is current or they cannot be written. */
    @Override
    public Map<String, String> get() {
        try {
            TraceContext context = tracer.currentTraceContext().context();
            if (context == null) {
                return Map.of();
            }
            Map<String, String> headers = new LinkedHashMap<>();
            propagator.inject(context, headers, Map::put);
            return Map.copyOf(headers);
        } catch (RuntimeException e) {
            return Map.of();
        }
    }
}
