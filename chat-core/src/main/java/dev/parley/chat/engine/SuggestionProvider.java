package dev.parley.chat.engine;

import dev.parley.chat.model.Suggestions;

/**
 * Makes follow-up suggestions for an answer: short prompts a person can click to send next (see
 * {@link ChatEngine.Builder#suggestions}). The engine asks after a run SUCCEEDED, never while it works, and
 * stores what comes back on the answer ({@link dev.parley.chat.model.AssistantMessage#suggestions()}).
 * {@link dev.parley.chat.agent.ModelSuggestions} asks a model; a host can equally derive them from its own
 * data.
 *
 * <p><b>Threading.</b> Called on one of the engine's worker threads, for one thread of conversation at a
 * time: the engine never has two calls for the same conversation thread in flight, but calls for different
 * conversation threads run concurrently, so an implementation must be thread-safe. A call that takes longer
 * than {@link ChatEngine.Builder#suggestionTimeout} is abandoned (its worker interrupted) and its result, if it
 * still comes, ignored.
 *
 * <p><b>Failures.</b> Whatever it throws is logged (WARN, without any text of the conversation) and the answer
 * simply gets no suggestions; the run it follows has ended and is never affected.
 */
@FunctionalInterface
public interface SuggestionProvider {
    /**
     * Follow-up prompts for one answer.
     *
     * @param request the answer and what it answered; never null
     * @return the suggestions (at most {@link SuggestionRequest#maxSuggestions()} are kept, blank ones are
     *     dropped), or null for none
     * @throws Exception anything; the answer then gets no suggestions
     */
    Suggestions suggest(SuggestionRequest request) throws Exception;
}
