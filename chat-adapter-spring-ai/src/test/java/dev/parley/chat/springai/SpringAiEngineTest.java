package dev.parley.chat.springai;

import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.testing.openai.ModelEngineContract;

/** The whole engine over Spring AI's OpenAI model and a loopback OpenAI-compatible server. */
class SpringAiEngineTest extends ModelEngineContract {
    @Override
    protected ModelClient client(String baseUrl) {
        return SpringAiModelClient.of(OpenAiModels.model(baseUrl));
    }
}
