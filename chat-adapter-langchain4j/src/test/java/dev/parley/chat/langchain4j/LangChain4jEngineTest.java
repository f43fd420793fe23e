package dev.parley.chat.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.testing.openai.ModelEngineContract;

/** The whole engine over LangChain4j's OpenAI model and a loopback OpenAI-compatible server. */
class LangChain4jEngineTest extends ModelEngineContract {
    @Override
    protected ModelClient client(String baseUrl) {
        return LangChain4jModelClient.of(OpenAiModels.model(baseUrl));
    }

    /** LangChain4j writes each message's keys in one order: the text is compared, not only the tree. */
    @Override
    protected void assertMessagesSent(JsonNode messages, String expected) {
        assertThat(messages.toString()).isEqualTo(expected);
    }

    /** LangChain4j's {@code HttpException} keeps the status and the body, not the headers: no {@code Retry-After}. */
    @Override
    protected boolean carriesRetryAfter() {
        return false;
    }
}
