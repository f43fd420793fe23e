package dev.parley.chat.agent;

import dev.parley.chat.model.TokenUsage;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * What a finished model call produced.
 *
 * @param text the whole text (what the deltas added up to)
 * @param toolCalls the complete tool calls, in the order the model made them; empty for an answer
 * @param usage this call's tokens, null if the model did not say
 * @param finishReason the model's own reason, e.g. {@code stop}, {@code tool_calls}, {@code length} (or
 *     {@code max_tokens}); null when the stream ended without one, which the agent loop takes as an answer that
 *     broke off (the run fails, its partial text kept). Clients pass on what the provider said and never make one up
 */
public record ModelResponse(String text, List<ToolCall> toolCalls, @Nullable TokenUsage usage,
        @Nullable String finishReason) {
    public ModelResponse {
        Objects.requireNonNull(text, "text");
        toolCalls = toolCalls == null ? List.of() : List.copyOf(toolCalls);
    }
}
