package dev.parley.chat.spring;

import dev.langchain4j.model.chat.StreamingChatModel;
import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.agent.ModelSuggestions;
import dev.parley.chat.engine.SuggestionProvider;
import dev.parley.chat.langchain4j.LangChain4jModelClient;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.runtime.SkillResolver;
import dev.parley.chat.spring.ParleyAgentProperties.ModelLibrary;
import dev.parley.chat.spring.internal.AgentRuntimes;
import dev.parley.chat.spring.internal.ModelCandidate;
import dev.parley.chat.spring.internal.RunTracing;
import dev.parley.chat.springai.SpringAiModelClient;
import java.util.List;
import java.util.stream.Collectors;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnSingleCandidate;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Parley's agent loop ({@link AgentLoopRuntime}) on the application's own model, when no other runtime is
 * configured: a LangChain4j {@link StreamingChatModel} bean (with {@code chat-adapter-langchain4j} on the classpath)
 * or a Spring AI {@link ChatModel} bean (with {@code chat-adapter-spring-ai}). Hermes configured
 * ({@code parley.hermes.base-url}) wins, and so does a host's {@link RuntimeAdapter} bean. A model bean of each
 * library and no {@code parley.agent.library} refuses to start (see {@code ModelLibraryFailureAnalyzer}); two beans
 * of one library with none primary are not used (as Spring Boot does), nor is a single one of them picked.
 *
 * <p>The models a person may pick come from {@code parley.agent.models} (default: the bean's own model, no choice),
 * skills from {@code parley.agent.skills-dir} or a {@link SkillResolver} bean, the iteration budget from
 * {@code parley.agent.max-iterations}, the system prompt from {@code parley.agent.system-prompt} (a skill's text follows
 * it). Model beans are
 * seen when the host defines them or when the auto-configuration making them runs first: this one is ordered after the
 * chat model auto-configurations of Spring AI (1.0 to 2.0: OpenAI, Anthropic, Ollama, Mistral, DeepSeek, Google GenAI,
 * Vertex AI Gemini, Bedrock Converse, Azure OpenAI, …) and of LangChain4j's Spring Boot starters (OpenAI, Ollama,
 * Anthropic), named as strings so that none of those classes is needed. A provider's auto-configuration missing from
 * that list is not waited for: define the model bean yourself then.
 */
@AutoConfiguration(after = ParleyHermesAutoConfiguration.class, before = ParleyAutoConfiguration.class, afterName = {
    // Spring AI's chat model auto-configurations declare no order and sort after Parley's by name: wait for them
    "org.springframework.ai.model.openai.autoconfigure.OpenAiChatAutoConfiguration",
    "org.springframework.ai.model.openaisdk.autoconfigure.OpenAiSdkChatAutoConfiguration",
    "org.springframework.ai.model.anthropic.autoconfigure.AnthropicChatAutoConfiguration",
    "org.springframework.ai.model.ollama.autoconfigure.OllamaChatAutoConfiguration",
    "org.springframework.ai.model.mistralai.autoconfigure.MistralAiChatAutoConfiguration",
    "org.springframework.ai.model.deepseek.autoconfigure.DeepSeekChatAutoConfiguration",
    "org.springframework.ai.model.google.genai.autoconfigure.chat.GoogleGenAiChatAutoConfiguration",
    "org.springframework.ai.model.vertexai.autoconfigure.gemini.VertexAiGeminiChatAutoConfiguration",
    "org.springframework.ai.model.bedrock.converse.autoconfigure.BedrockConverseProxyChatAutoConfiguration",
    "org.springframework.ai.model.azure.openai.autoconfigure.AzureOpenAiChatAutoConfiguration",
    "org.springframework.ai.model.huggingface.autoconfigure.HuggingfaceChatAutoConfiguration",
    "org.springframework.ai.model.minimax.autoconfigure.MiniMaxChatAutoConfiguration",
    "org.springframework.ai.model.zhipuai.autoconfigure.ZhiPuAiChatAutoConfiguration",
    "org.springframework.ai.model.oci.genai.autoconfigure.OCIGenAiAutoConfiguration",
    "org.springframework.ai.model.chat.client.autoconfigure.ChatClientAutoConfiguration",
    // LangChain4j's starters, for Spring Boot 3 (AutoConfig) and 4
    "dev.langchain4j.openai.spring.AutoConfig",
    "dev.langchain4j.openai.spring.OpenAiAutoConfiguration",
    "dev.langchain4j.ollama.spring.AutoConfig",
    "dev.langchain4j.ollama.spring.OllamaAutoConfiguration",
    "dev.langchain4j.anthropic.spring.AutoConfig",
    "dev.langchain4j.anthropic.spring.AnthropicAutoConfiguration"
})
@ConditionalOnClass(AgentLoopRuntime.class)
@ConditionalOnMissingBean(RuntimeAdapter.class)
@EnableConfigurationProperties({ParleyAgentProperties.class, ParleySuggestionProperties.class})
public class ParleyModelAutoConfiguration {

    @Bean
    @ConditionalOnBean(ModelCandidate.class)
    public AgentLoopRuntime parleyAgentRuntime(ParleyAgentProperties properties, ObjectProvider<ModelCandidate> candidates,
            ObjectProvider<SkillResolver> skillResolver, ObjectProvider<RunTracing> tracing) {
        List<ModelCandidate> found = candidates.orderedStream().collect(Collectors.toList());
        SkillResolver skills = skillResolver.getIfAvailable(() -> properties.getSkillsDir() == null
                ? SkillResolver.none() : SkillResolver.directory(properties.getSkillsDir()));
        return AgentRuntimes.build(properties, found, skills, tracing.getIfAvailable());
    }

    /**
     * Follow-up suggestions from the agent's model ({@code parley.suggestions.model.enabled=true}; off by default),
     * unless the application has its own {@link SuggestionProvider}.
     */
    @Bean
    @ConditionalOnBean(ModelCandidate.class)
    @ConditionalOnMissingBean(SuggestionProvider.class)
    @ConditionalOnProperty(prefix = "parley.suggestions.model", name = "enabled", havingValue = "true")
    public ModelSuggestions parleyModelSuggestions(ParleyAgentProperties properties,
            ObjectProvider<ModelCandidate> candidates, ParleySuggestionProperties suggestions) {
        ModelSuggestions.Builder builder = ModelSuggestions.builder(AgentRuntimes.chosenClient(properties,
                candidates.orderedStream().collect(Collectors.toList())))
                .modelId(suggestions.getModel().getModelId());
        if (suggestions.getModel().getPrompt() != null) {
            builder.prompt(suggestions.getModel().getPrompt());
        }
        return builder.build();
    }

    /** The application's LangChain4j streaming model. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({LangChain4jModelClient.class, StreamingChatModel.class})
    @ConditionalOnSingleCandidate(StreamingChatModel.class)
    static class LangChain4j {
        @Bean
        ModelCandidate parleyLangChain4jModel(StreamingChatModel model) {
            return new ModelCandidate(ModelLibrary.LANGCHAIN4J, model.getClass().getSimpleName(),
                    LangChain4jModelClient.of(model));
        }
    }

    /** The application's Spring AI chat model. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass({SpringAiModelClient.class, ChatModel.class})
    @ConditionalOnSingleCandidate(ChatModel.class)
    static class SpringAi {
        @Bean
        ModelCandidate parleySpringAiModel(ChatModel model) {
            return new ModelCandidate(ModelLibrary.SPRING_AI, model.getClass().getSimpleName(),
                    SpringAiModelClient.of(model));
        }
    }
}
