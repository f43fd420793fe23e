package dev.parley.chat.engine;

import java.util.Objects;

/**
 * What a {@link SuggestionProvider} is asked about: one answer that has just ended.
 *
 * @param ownerId the owner of the conversation
 * @param threadId the conversation
 * @param runId the run that wrote the answer
 * @param answerMessageId the answer the suggestions will be stored with
 * @param question the person's message the answer answers (for a regeneration, that message's text)
 * @param answer the answer's text
 * @param maxSuggestions how many suggestions are kept at most (at least 1)
 */
public record SuggestionRequest(
        String ownerId,
        String threadId,
        String runId,
        String answerMessageId,
        String question,
        String answer,
        int maxSuggestions) {

    public SuggestionRequest {
        Objects.requireNonNull(ownerId, "ownerId");
        Objects.requireNonNull(threadId, "threadId");
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(answerMessageId, "answerMessageId");
        Objects.requireNonNull(question, "question");
        Objects.requireNonNull(answer, "answer");
        if (maxSuggestions < 1) {
            throw new IllegalArgumentException("maxSuggestions must be at least 1");
        }
    }
}
