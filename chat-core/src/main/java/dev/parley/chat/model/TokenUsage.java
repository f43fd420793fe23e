package dev.parley.chat.model;

/** Token counts a runtime reported for a run; totals, not increments. Negative values are rejected. */
public record TokenUsage(long inputTokens, long outputTokens, long totalTokens) {
    public TokenUsage {
        if (inputTokens < 0 || outputTokens < 0 || totalTokens < 0) {
            throw new IllegalArgumentException("token counts must not be negative");
        }
    }
}
