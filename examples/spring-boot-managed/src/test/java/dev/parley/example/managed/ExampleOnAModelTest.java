package dev.parley.example.managed;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import dev.parley.chat.testing.openai.Sse;
import dev.parley.example.ExampleApplication;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The example app on a model (parley.example.runtime=openai): the agent loop over LangChain4j's OpenAI client,
 * against an OpenAI-compatible server on loopback, under Spring Boot's Jackson.
 */
@SpringBootTest(classes = ExampleApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"parley.example.runtime=openai", "parley.example.openai.model=llama3.2"})
class ExampleOnAModelTest {
    private static final WireMockServer MODEL = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));

    @LocalServerPort
    int port;

    @DynamicPropertySource
    static void modelAndDatabase(DynamicPropertyRegistry registry) {
        MODEL.start();
        registry.add("parley.example.openai.base-url", () -> "http://127.0.0.1:" + MODEL.port() + "/v1");
        registry.add("spring.datasource.url", () -> "jdbc:sqlite:target/boot-managed-model-" + System.nanoTime() + ".db");
    }

    @AfterAll
    static void stopModel() {
        MODEL.stop();
    }

    @Test
    void aTurnRunsOnTheModelAndIsStored() throws Exception {
        MODEL.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream")
                .withBody(Sse.stream().reasoning("A greeting.").text("Hello ", "from the model.")
                        .finish("stop").usage(9, 4).done())));
        ChatApi api = new ChatApi(port);

        ChatApi.Turn turn = api.turn("hi");

        assertThat(turn.eventTypes()).contains("thinking_delta", "text_delta", "usage").endsWith("run_finished");
        assertThat(turn.streamedText()).isEqualTo("Hello from the model.");
        assertThat(api.messages(turn.sessionId()).findValuesAsText("text")).contains("hi", "Hello from the model.");
    }
}
