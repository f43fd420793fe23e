package dev.parley.chat.engine;

import java.util.List;
import java.util.Objects;

/**
 * An answer's follow-up suggestions as {@link ChatEngine#suggestions} finds them.
 *
 * @param messageId the answer
 * @param prompts the stored prompts; empty while none are stored (none were made, or they are still being made)
 * @param pending true while this engine is still making them (or will: the answer is still being written, or
 *     waits for the call in flight for the same conversation): ask again to get them. False once they are stored, or when none will come (no provider,
 *     the run did not succeed, the provider failed, a newer run started on the conversation, or another host
 *     instance ended the run)
 */
public record AnswerSuggestions(String messageId, List<String> prompts, boolean pending) {
    public AnswerSuggestions {
        Objects.requireNonNull(messageId, "messageId");
        prompts = List.copyOf(prompts);
    }
}
