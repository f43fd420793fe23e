package dev.parley.chat.spring;

import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Traces of runs ({@code parley.observation.*}), read when {@code chat-observation} is on the classpath and the
 * application has an {@code ObservationRegistry} (see the starter's README, "Tracing").
 */
@ConfigurationProperties("parley.observation")
public class ParleyObservationProperties {
    /** Whether runs, model calls, tool calls, waits and store writes are observed. */
    private boolean enabled = true;
    /**
     * Whether text people and models wrote goes on the spans: the run's input, tool arguments and results. Off:
     * traces usually leave the service, and that text is personal.
     */
    private boolean includeContent;
    /**
     * Whether the agent loop's model calls are observed ({@code parley.model.call}). Turn off when the model
     * library's own observations (Spring AI's) are enough.
     */
    private boolean modelCalls = true;
    /** The runtime's name on every run ({@code parley.runtime}); unset: hermes or agent-loop, as configured. */
    private @Nullable String runtime;

    public boolean isEnabled() {
        return enabled;
    }

    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    public boolean isIncludeContent() {
        return includeContent;
    }

    public void setIncludeContent(boolean includeContent) {
        this.includeContent = includeContent;
    }

    public boolean isModelCalls() {
        return modelCalls;
    }

    public void setModelCalls(boolean modelCalls) {
        this.modelCalls = modelCalls;
    }

    public @Nullable String getRuntime() {
        return runtime;
    }

    public void setRuntime(@Nullable String runtime) {
        this.runtime = runtime;
    }
}
