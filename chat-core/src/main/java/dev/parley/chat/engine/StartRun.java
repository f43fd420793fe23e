package dev.parley.chat.engine;

import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A person's message and how to answer it.
 *
 * @param message the text; not blank, at most {@link EngineLimits#maxMessageLength()} characters
 * @param modelId the model for this run, null for the thread's choice
 * @param skill the skill for this run, null for the thread's choice
 * @param maxIterations the runtime's iteration budget, null for its default; positive
 * @param context free-form context for the runtime (seed 004's {@code addContext}); JSON-compatible values
 */
public record StartRun(
        String message,
        @Nullable String modelId,
        @Nullable String skill,
        @Nullable Integer maxIterations,
        Map<String, Object> context) {

    public StartRun {
        Objects.requireNonNull(message, "message");
        context = context == null ? Map.of() : Map.copyOf(context);
    }

    public static StartRun of(String message) {
        return new StartRun(message, null, null, null, Map.of());
    }
}
