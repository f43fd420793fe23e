package dev.parley.chat.spring.internal;

import dev.parley.chat.spring.ClientContextFilter;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Turns the context a client sent into the run's context: dropped when the host does not accept client
 * context, else what the host's {@link ClientContextFilter} keeps, under {@value #KEY} so that the runtime
 * can tell it from context the application gives. Immutable, thread-safe if the filter is.
 */
public final class ClientContexts {
    /** The run-context key everything a client sent goes under. */
    public static final String KEY = "sentByClient";

    private final boolean accept;
    private final @Nullable ClientContextFilter filter;

    /** @param filter the host's filter, null to keep everything sent */
    public ClientContexts(boolean accept, @Nullable ClientContextFilter filter) {
        this.accept = accept;
        this.filter = filter;
    }

    /** The run context for what {@code ownerId}'s client sent: empty, or {@code {sentByClient: kept}}. */
    public Map<String, Object> runContext(String ownerId, Map<String, Object> sent) {
        if (!accept || sent.isEmpty()) {
            return Map.of();
        }
        Map<String, Object> kept = filter == null ? sent : filter.filter(ownerId, sent);
        return kept == null || kept.isEmpty() ? Map.of() : Map.of(KEY, kept);
    }
}
