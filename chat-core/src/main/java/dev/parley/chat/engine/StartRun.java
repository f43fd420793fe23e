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
 * @param context free-form context for the runtime (what the page shows, say); JSON-compatible values
 * @param clientTools tools the person's browser runs for this run (AG-UI's frontend tools): offered to the
 *     runtime with the host actions; a call of one waits, as a pending input, for the page's result
 * @param clientMessageId the sending client's id for this message, an idempotency key (1 to 200 characters):
 *     the same id and message again returns the first run's ticket and starts nothing; the same id with
 *     another message is a CONFLICT. Stored with the user message. Null for none.
 * @param attachmentIds files and images uploaded to the thread beforehand ({@link ChatAttachments#upload}) that
 *     the message sends, in order; empty for none
 */
public record StartRun(
        String message,
        @Nullable String modelId,
        @Nullable String skill,
        @Nullable Integer maxIterations,
        Map<String, Object> context,
        List<HostToolSpec> clientTools,
        @Nullable String clientMessageId,
        List<String> attachmentIds) {

    public StartRun {
        attachmentIds = attachmentIds == null ? List.of() : List.copyOf(attachmentIds);
        Objects.requireNonNull(message, "message");
        context = context == null ? Map.of() : Map.copyOf(context);
        clientTools = clientTools == null ? List.of() : List.copyOf(clientTools);
    }

    /** A message without attachments. */
    public StartRun(String message, @Nullable String modelId, @Nullable String skill, @Nullable Integer maxIterations,
            Map<String, Object> context, List<HostToolSpec> clientTools, @Nullable String clientMessageId) {
        this(message, modelId, skill, maxIterations, context, clientTools, clientMessageId, List.of());
    }

    /** A message without client tools or client id. */
    public StartRun(String message, @Nullable String modelId, @Nullable String skill, @Nullable Integer maxIterations,
            Map<String, Object> context) {
        this(message, modelId, skill, maxIterations, context, List.of(), null);
    }

    /** The same request with tools the person's browser runs. */
    public StartRun withClientTools(List<HostToolSpec> tools) {
        return new StartRun(message, modelId, skill, maxIterations, context, tools, clientMessageId, attachmentIds);
    }

    /** The same request with the sending client's id for the message. */
    public StartRun withClientMessageId(@Nullable String id) {
        return new StartRun(message, modelId, skill, maxIterations, context, clientTools, id, attachmentIds);
    }

    /** The same request sending these uploaded attachments. */
    public StartRun withAttachments(List<String> ids) {
        return new StartRun(message, modelId, skill, maxIterations, context, clientTools, clientMessageId, ids);
    }

    public static StartRun of(String message) {
        return new StartRun(message, null, null, null, Map.of());
    }
}
