package dev.parley.chat.spring;

import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Follow-up suggestions after each answer ({@code parley.suggestions.*}). They are made by the application's
 * {@link dev.parley.chat.engine.SuggestionProvider} bean, or — with {@code parley.suggestions.model.enabled=true}
 * and the agent loop on the application's own model — by {@link dev.parley.chat.agent.ModelSuggestions}: one small
 * extra model call per answer, off by default. Without either, answers have none.
 */
@ConfigurationProperties(prefix = "parley.suggestions")
public class ParleySuggestionProperties {
    /** How many suggestions an answer keeps at most (1 to 10). */
    private int max = 3;
    /** How long one suggestion call may take before it is abandoned. */
    private Duration timeout = Duration.ofSeconds(20);
    private final Model model = new Model();

    public int getMax() {
        return max;
    }

    public void setMax(int max) {
        this.max = max;
    }

    public Duration getTimeout() {
        return timeout;
    }

    public void setTimeout(Duration timeout) {
        this.timeout = timeout;
    }

    public Model getModel() {
        return model;
    }

    /** Suggestions from the agent loop's model ({@code parley.suggestions.model.*}). */
    public static class Model {
        /** Ask the agent's model for suggestions after each answer (an extra call per answer). */
        private boolean enabled;
        /** The model to ask (a cheap one); default the model bean's own default. */
        private @Nullable String modelId;
        /** The instruction; {@code %d} becomes the number asked for. Default {@code ModelSuggestions.DEFAULT_PROMPT}. */
        private @Nullable String prompt;

        public boolean isEnabled() {
            return enabled;
        }

        public void setEnabled(boolean enabled) {
            this.enabled = enabled;
        }

        public @Nullable String getModelId() {
            return modelId;
        }

        public void setModelId(@Nullable String modelId) {
            this.modelId = modelId;
        }

        public @Nullable String getPrompt() {
            return prompt;
        }

        public void setPrompt(@Nullable String prompt) {
            this.prompt = prompt;
        }
    }
}
