package dev.parley.chat.engine;

import dev.parley.chat.runtime.HostToolSpec;
import java.util.List;
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
 * @param clientTools tools the person's browser runs for this run (AG-UI's frontend tools): offered to the
 *     runtime with the host actions; a call of one waits, as a pending input, for the page's result
 */
public record StartRun(
        String message,
        @Nullable String modelId,
        @Nullable String skill,
        @Nullable Integer maxIterations,
        Map<String, Object> context,
        List<HostToolSpec> clientTools) {

    public StartRun {
        Objects.requireNonNull(message, "message");
        context = context == null ? Map.of() : Map.copyOf(context);
        clientTools = clientTools == null ? List.of() : List.copyOf(clientTools);
    }

    /** A message without client tools. */
    public StartRun(String message, @Nullable String modelId, @Nullable String skill, @Nullable Integer maxIterations,
            Map<String, Object> context) {
        this(message, modelId, skill, maxIterations, context, List.of());
    }

    /** The same request with tools the person's browser runs. */
    public StartRun withClientTools(List<HostToolSpec> tools) {
        return new StartRun(message, modelId, skill, maxIterations, context, tools);
    }

    public static StartRun of(String message) {
        return new StartRun(message, null, null, null, Map.of());
    }
}
