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
 * @param finishReason the model's own reason, e.g. {@code stop}, {@code tool_calls}, {@code length}; may be null
 */
public record ModelResponse(String text, List<ToolCall> toolCalls, @Nullable TokenUsage usage,
        @Nullable String finishReason) {
    public ModelResponse {
        Objects.requireNonNull(text, "text");
        toolCalls = toolCalls == null ? List.of() : List.copyOf(toolCalls);
    }
}
