package dev.parley.chat.springai;

import java.time.Duration;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;

/** Spring AI's OpenAI model, as the adapter's tests point it at an OpenAI-compatible server. */
final class OpenAiModels {
    private OpenAiModels() {
    }

    /** The model (over OpenAI's Java SDK) on {@code baseUrl}, without the SDK's retries. */
    static OpenAiChatModel model(String baseUrl) {
        return OpenAiChatModel.builder().options(OpenAiChatOptions.builder().baseUrl(baseUrl).apiKey("sk-test-key")
                .model("gpt-test").maxRetries(0).timeout(Duration.ofSeconds(10)).build()).build();
    }
}
