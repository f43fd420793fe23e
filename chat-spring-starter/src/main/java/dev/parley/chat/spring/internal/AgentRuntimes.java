package dev.parley.chat.spring.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.runtime.ModelOption;
import dev.parley.chat.runtime.SkillResolver;
import dev.parley.chat.spring.ParleyAgentProperties;
import dev.parley.chat.spring.ParleyAgentProperties.ModelLibrary;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/** Builds the agent loop runtime from the model beans found and the {@code parley.agent.*} settings. */
public final class AgentRuntimes {
    private AgentRuntimes() {
    }

    /**
     * The agent loop on the one candidate the settings select.
     *
     * @param candidates the model beans found, at most one per library, at least one
     * @throws ModelLibraryNotChosen when the library is AUTO and both libraries have a model
     * @throws ChatException CONFIGURATION when the library chosen has no model bean, a model has no id or the iteration
     *     budget is not positive
     */
    public static AgentLoopRuntime build(ParleyAgentProperties settings, List<ModelCandidate> candidates,
            SkillResolver skills) {
        return build(settings, candidates, skills, null);
    }

    /**
     * As {@link #build(ParleyAgentProperties, List, SkillResolver)}; with {@code tracing}, the model's calls are
     * observed and the loop runs on threads that carry the run's trace.
     */
    public static AgentLoopRuntime build(ParleyAgentProperties settings, List<ModelCandidate> candidates,
            SkillResolver skills, @Nullable RunTracing tracing) {
        ModelCandidate chosen = choose(settings.getLibrary(), candidates);
        if (settings.getMaxIterations() < 1) {
            throw ChatException.configuration("parley.agent.max-iterations must be positive, got " + settings.getMaxIterations());
        }
        ModelClient client = tracing == null ? chosen.client()
                : tracing.modelClient().apply(chosen.client(), provider(chosen));
        AgentLoopRuntime.Builder builder = AgentLoopRuntime.builder(client)
                .maxIterations(settings.getMaxIterations())
                .systemPrompt(settings.getSystemPrompt())
                .skills(skills);
        if (!settings.getModels().isEmpty()) {
            builder.models(models(settings.getModels()));
        }
        if (tracing != null) {
            builder.executor(tracing.agentExecutor());
        }
        return builder.build();
    }

    /**
     * The model client of the one candidate the settings select (for a second use of the agent's model, such as
     * follow-up suggestions).
     *
     * @throws ModelLibraryNotChosen or ChatException CONFIGURATION as {@link #build} does
     */
    public static ModelClient chosenClient(ParleyAgentProperties settings, List<ModelCandidate> candidates) {
        return choose(settings.getLibrary(), candidates).client();
    }

    /** The GenAI provider name ({@code gen_ai.provider.name}) for a model bean, from its class name. */
    static String provider(ModelCandidate candidate) {
        String type = candidate.bean().toLowerCase(Locale.ROOT);
        for (String[] known : PROVIDERS) {
            if (type.contains(known[0])) {
                return known[1];
            }
        }
        return candidate.library() == ModelLibrary.LANGCHAIN4J ? "langchain4j" : "spring_ai";
    }

    private static final String[][] PROVIDERS = {{"azureopenai", "azure.ai.openai"}, {"openai", "openai"},
        {"anthropic", "anthropic"}, {"bedrock", "aws.bedrock"}, {"vertexai", "gcp.vertex_ai"},
        {"gemini", "gcp.gemini"}, {"mistral", "mistral_ai"}, {"ollama", "ollama"}, {"deepseek", "deepseek"}};

    static ModelCandidate choose(ModelLibrary library, List<ModelCandidate> candidates) {
        if (library == ModelLibrary.AUTO) {
            if (candidates.size() > 1) {
                throw new ModelLibraryNotChosen(candidates);
            }
            return candidates.get(0);
        }
        return candidates.stream().filter(c -> c.library() == library).findFirst()
                .orElseThrow(() -> ChatException.configuration("parley.agent.library is " + library
                        + " but the application has no " + beanType(library) + " bean; found "
                        + ModelLibraryNotChosen.describe(candidates) + ". Define one, or set parley.agent.library to "
                        + candidates.get(0).library() + " or AUTO."));
    }

    private static String beanType(ModelLibrary library) {
        return library == ModelLibrary.LANGCHAIN4J ? "LangChain4j StreamingChatModel" : "Spring AI ChatModel";
    }

    private static List<ModelOption> models(List<ParleyAgentProperties.AgentModel> models) {
        return models.stream().map(m -> {
            if (m.getId().isBlank()) {
                throw ChatException.configuration("every parley.agent.models entry needs an id (the provider's model name)");
            }
            String name = m.getName() == null || m.getName().isBlank() ? m.getId() : m.getName();
            String provider = m.getProvider() == null || m.getProvider().isBlank() ? null : m.getProvider();
            return new ModelOption(m.getId().strip(), name, provider);
        }).collect(Collectors.toList());
    }
}
