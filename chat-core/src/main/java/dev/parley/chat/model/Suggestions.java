package dev.parley.chat.model;

import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Follow-up suggestions stored with an answer: short prompts a person can click to send next. Made after the
 * answer's run ended, by the host's {@code SuggestionProvider} (which may call a model), and stored on the
 * {@link AssistantMessage} so a reload shows them.
 *
 * @param prompts the prompts, in the order to show them; never null, no null element. The engine stores only stripped,
 *     distinct, non-blank ones, at most as many as it is configured for
 * @param usage the tokens the call that made them used, null when it reported none (a provider that calls no
 *     model). Counted apart from the answer's own {@link AssistantMessage#usage()}, which stays what the run's
 *     runtime reported: the answer's total is the sum of both
 */
public record Suggestions(List<String> prompts, @Nullable TokenUsage usage) {
    public Suggestions {
        Objects.requireNonNull(prompts, "prompts");
        prompts = List.copyOf(prompts);
    }

    /** Prompts made without a model call (no token usage). */
    public static Suggestions of(List<String> prompts) {
        return new Suggestions(prompts, null);
    }
}
