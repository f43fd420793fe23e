package dev.parley.chat.spring.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.runtime.ModelOption;
import dev.parley.chat.runtime.SkillResolver;
import dev.parley.chat.spring.ParleyAgentProperties;
import dev.parley.chat.spring.ParleyAgentProperties.ModelLibrary;
import java.util.List;
import java.util.stream.Collectors;

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
        ModelCandidate chosen = choose(settings.getLibrary(), candidates);
        if (settings.getMaxIterations() < 1) {
            throw ChatException.configuration("parley.agent.max-iterations must be positive, got " + settings.getMaxIterations());
        }
        AgentLoopRuntime.Builder builder = AgentLoopRuntime.builder(chosen.client())
                .maxIterations(settings.getMaxIterations())
                .systemPrompt(settings.getSystemPrompt())
                .skills(skills);
        if (!settings.getModels().isEmpty()) {
            builder.models(models(settings.getModels()));
        }
        return builder.build();
    }

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
