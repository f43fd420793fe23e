package dev.parley.chat.langchain4j;

import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import java.time.Duration;

/** LangChain4j's streaming OpenAI model, as the adapter's tests point it at an OpenAI-compatible server. */
final class OpenAiModels {
    private OpenAiModels() {
    }

    /** The model on {@code baseUrl}, returning {@code reasoning_content} as thinking. */
    static OpenAiStreamingChatModel model(String baseUrl) {
        return OpenAiStreamingChatModel.builder().baseUrl(baseUrl).apiKey("sk-test-key").modelName("gpt-test")
                .returnThinking(true).timeout(Duration.ofSeconds(10)).build();
    }
}
