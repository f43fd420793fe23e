package dev.parley.chat.spring.internal;

import java.util.Map;
import java.util.function.Supplier;

/**
 * The calling thread's trace headers, kept with each run it starts so that a run followed again after a restart
 * continues its trace (made from Micrometer Tracing's beans when the application has them).
 *
 * @param headers never throws; empty when there is nothing to keep
 */
public record RunStartHeaders(Supplier<Map<String, String>> headers) {
}
