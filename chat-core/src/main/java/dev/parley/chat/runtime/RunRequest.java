package dev.parley.chat.runtime;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What the engine asks a runtime to do for one run.
 *
 * @param ownerId the caller the run belongs to
 * @param assistantMessageId the id of the answer message; text deltas should target it
 * @param userMessage the person's text (for a regeneration, the text being answered again)
 * @param runtimeSessionId the thread's runtime session id to continue, null when there is none to continue:
 *     the thread's first run, a run answering an edit or another branch than the session's, or a
 *     regeneration (start a new session; {@code history} holds the conversation so far)
 * @param modelId the model to use, null for the runtime's default
 * @param skill the skill to use, null for none
 * @param maxIterations the iteration budget, null for the adapter's default
 * @param hostTools tools the runtime may call whose results the host side supplies: host actions, and tools
 *     the person's browser runs (see {@link Capability#HOST_TOOLS})
 * @param context free-form context from the host (what the page shows, say); JSON-compatible values
 * @param history the conversation before {@code userMessage}, read from the store only if asked for
 * @param conversationKey a key for the conversation that is never reused, even where a thread id is (a client
 *     may choose a thread's id, as AG-UI's {@code threadId}, and open it again after the thread was deleted):
 *     the thread's id and its creation time. A runtime that keeps anything per conversation — files, "for
 *     this conversation" approvals — keys it by this, and forgets it in
 *     {@link RuntimeAdapter#threadDeleted(String)}.
 */
public record RunRequest(
        String threadId,
        String runId,
        String ownerId,
        String assistantMessageId,
        String userMessage,
        @Nullable String runtimeSessionId,
        @Nullable String modelId,
        @Nullable String skill,
        @Nullable Integer maxIterations,
        List<HostToolSpec> hostTools,
        Map<String, Object> context,
        ConversationHistory history,
        String conversationKey) {

    public RunRequest {
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(conversationKey, "conversationKey");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(ownerId, "ownerId");
        Objects.requireNonNull(assistantMessageId, "assistantMessageId");
        Objects.requireNonNull(userMessage, "userMessage");
        hostTools = hostTools == null ? List.of() : List.copyOf(hostTools);
        context = context == null ? Map.of() : Map.copyOf(context);
        history = history == null ? ConversationHistory.empty() : history;
    }

    /** A request whose conversation key is the thread id (for tests and runtimes driven without an engine). */
    public RunRequest(String threadId, String runId, String ownerId, String assistantMessageId, String userMessage,
            @Nullable String runtimeSessionId, @Nullable String modelId, @Nullable String skill,
            @Nullable Integer maxIterations, List<HostToolSpec> hostTools, Map<String, Object> context,
            ConversationHistory history) {
        this(threadId, runId, ownerId, assistantMessageId, userMessage, runtimeSessionId, modelId, skill, maxIterations,
                hostTools, context, history, threadId);
    }

    /** A request without earlier turns, whose conversation key is the thread id. */
    public RunRequest(String threadId, String runId, String ownerId, String assistantMessageId, String userMessage,
            @Nullable String runtimeSessionId, @Nullable String modelId, @Nullable String skill,
            @Nullable Integer maxIterations, List<HostToolSpec> hostTools, Map<String, Object> context) {
        this(threadId, runId, ownerId, assistantMessageId, userMessage, runtimeSessionId, modelId, skill, maxIterations,
                hostTools, context, ConversationHistory.empty());
    }

    /** The conversation key the engine gives a thread's runs: its id and creation time, never reused. */
    public static String conversationKey(String threadId, java.time.Instant createdAt) {
        return threadId + "@" + createdAt.toEpochMilli();
    }
}
