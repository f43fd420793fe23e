package dev.parley.chat.engine;

import org.jspecify.annotations.Nullable;

/**
 * What a new thread starts with; every field may be null (no title yet: the first message names it; no
 * model or skill: the runtime's defaults).
 */
public record NewThread(@Nullable String title, @Nullable String modelId, @Nullable String skill) {
    public static NewThread empty() {
        return new NewThread(null, null, null);
    }
}
