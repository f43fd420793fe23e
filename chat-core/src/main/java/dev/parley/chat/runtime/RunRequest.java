package dev.parley.chat.runtime;

import dev.parley.chat.model.MessageAttachment;
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
 * @param attachments the files and images sent with {@code userMessage}, in order; empty for none. Only types
 *     the runtime's {@link RuntimeAdapter#attachmentSupport()} accepts (earlier messages of {@code history} may
 *     hold others, sent while another runtime served the thread)
 * @param attachmentContent reads the bytes of the attachments of {@code userMessage} and of {@code history}
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
        String conversationKey,
        List<MessageAttachment> attachments,
        AttachmentContent attachmentContent) {

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
        attachments = attachments == null ? List.of() : List.copyOf(attachments);
        attachmentContent = attachmentContent == null ? AttachmentContent.none() : attachmentContent;
    }

    /** A request without attachments. */
    public RunRequest(String threadId, String runId, String ownerId, String assistantMessageId, String userMessage,
            @Nullable String runtimeSessionId, @Nullable String modelId, @Nullable String skill,
            @Nullable Integer maxIterations, List<HostToolSpec> hostTools, Map<String, Object> context,
            ConversationHistory history, String conversationKey) {
        this(threadId, runId, ownerId, assistantMessageId, userMessage, runtimeSessionId, modelId, skill, maxIterations,
                hostTools, context, history, conversationKey, List.of(), AttachmentContent.none());
    }

    /** The same request with these attachments on its question, read through {@code content}. */
    public RunRequest withAttachments(List<MessageAttachment> files, AttachmentContent content) {
        return new RunRequest(threadId, runId, ownerId, assistantMessageId, userMessage, runtimeSessionId, modelId,
                skill, maxIterations, hostTools, context, history, conversationKey, files, content);
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
