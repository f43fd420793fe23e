package dev.parley.chat.model;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * One entry of a conversation. A run produces one {@link UserMessage} (none when regenerating), one
 * {@link AssistantMessage} (the answer), and any number of <em>step</em> messages (thinking, tool calls
 * and results, statuses, the todo list, clarify questions, errors) whose {@link #parentMessageId()} is
 * the assistant message they belong to.
 *
 * <p>Ids are unique across all threads. {@link #createdAt()} has millisecond precision.
 *
 * @see MessageKind
 */
public sealed interface Message
        permits UserMessage, AssistantMessage, ThinkingMessage, ActionExecutionMessage, ResultMessage,
                StatusMessage, TodoMessage, ClarifyMessage, ApprovalMessage, ErrorMessage {

    String id();

    String threadId();

    /** The run that produced this message. */
    String runId();

    /**
     * The message this one answers or belongs to: a user message for an assistant message (variants
     * share it), the assistant message for a step; null for a thread's first user message.
     */
    @Nullable String parentMessageId();

    MessageStatus status();

    Instant createdAt();

    MessageKind kind();
}
