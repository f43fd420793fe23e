package dev.parley.example;

import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import java.time.Duration;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * With {@code parley.example.runtime=openai}, a real model: LangChain4j's streaming OpenAI client on any
 * OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM Studio, OpenAI). The app defines only the model bean; the
 * starter runs Parley's agent loop on it. Settings: {@code parley.example.openai.base-url} (default Ollama's,
 * {@code http://localhost:11434/v1}), {@code parley.example.openai.model} and {@code parley.example.openai.api-key}
 * (local servers take any).
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnProperty(name = "parley.example.runtime", havingValue = "openai")
class OpenAiRuntimeConfiguration {

    @Bean
    StreamingChatModel openAiCompatibleModel(
            @Value("${parley.example.openai.base-url:http://localhost:11434/v1}") String baseUrl,
            @Value("${parley.example.openai.model:llama3.2}") String model,
            @Value("${parley.example.openai.api-key:not-needed-locally}") String apiKey) {
        return OpenAiStreamingChatModel.builder()
                .baseUrl(baseUrl)
                .apiKey(apiKey)
                .modelName(model)
                .returnThinking(true)
                .timeout(Duration.ofMinutes(5))
                .build();
    }
}
