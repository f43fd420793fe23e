package dev.parley.chat.spring;

import dev.parley.chat.agent.AgentLoopRuntime;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The agent loop over the application's own model, under {@code parley.agent.*}: used when no Hermes runtime is
 * configured and the application has a LangChain4j {@code StreamingChatModel} or a Spring AI {@code ChatModel} bean.
 */
@ConfigurationProperties("parley.agent")
public class ParleyAgentProperties {
    /**
     * Which model library's bean runs the agent loop: AUTO (the one present; both present refuses to start),
     * LANGCHAIN4J (the StreamingChatModel bean) or SPRING_AI (the ChatModel bean).
     */
    private ModelLibrary library = ModelLibrary.AUTO;
    /** Model calls per run when the run names no budget. */
    private int maxIterations = AgentLoopRuntime.DEFAULT_MAX_ITERATIONS;
    /** A folder of skill folders, each with a SKILL.md whose text follows the system prompt. */
    private @Nullable Path skillsDir;
    /** The system prompt of every run (who the assistant is, what it may do); a chosen skill's text follows it. */
    private @Nullable String systemPrompt;
    /**
     * The models a person may choose; each id is sent to the provider as the model name. Empty: the model bean's
     * own model, and no choice.
     */
    private List<AgentModel> models = new ArrayList<>();

    public ModelLibrary getLibrary() {
        return library;
    }

    public void setLibrary(ModelLibrary library) {
        this.library = library;
    }

    public int getMaxIterations() {
        return maxIterations;
    }

    public void setMaxIterations(int maxIterations) {
        this.maxIterations = maxIterations;
    }

    public @Nullable Path getSkillsDir() {
        return skillsDir;
    }

    public void setSkillsDir(@Nullable Path skillsDir) {
        this.skillsDir = skillsDir;
    }

    public @Nullable String getSystemPrompt() {
        return systemPrompt;
    }

    public void setSystemPrompt(@Nullable String systemPrompt) {
        this.systemPrompt = systemPrompt;
    }

    public List<AgentModel> getModels() {
        return models;
    }

    public void setModels(List<AgentModel> models) {
        this.models = models;
    }

    /** The model library whose bean the agent loop runs on. */
    public enum ModelLibrary {
        AUTO,
        LANGCHAIN4J,
        SPRING_AI
    }

    /** A model a person may choose. No credentials: the model bean holds those. */
    public static class AgentModel {
        /** The model name the provider knows, e.g. llama3.2; the id the selector shows and requests carry. */
        private String id = "";
        /** The name the selector shows; the id when unset. */
        private @Nullable String name;
        /** Who serves the model, shown next to it, e.g. ollama. */
        private @Nullable String provider;

        public String getId() {
            return id;
        }

        public void setId(String id) {
            this.id = id;
        }

        public @Nullable String getName() {
            return name;
        }

        public void setName(@Nullable String name) {
            this.name = name;
        }

        public @Nullable String getProvider() {
            return provider;
        }

        public void setProvider(@Nullable String provider) {
            this.provider = provider;
        }
    }
}
