package dev.parley.chat.springai;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.urlPathMatching;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import dev.parley.chat.agent.ModelMessage;
import dev.parley.chat.agent.ModelRequest;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.openai.RecordingListener;
import dev.parley.chat.testing.openai.Sse;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;

/**
 * Spring AI's own observation of a streamed call is a child of the observation current where the adapter is
 * called (Parley's model call, when runs are traced), not a trace of its own.
 */
class SpringAiObservationTest {
    private final WireMockServer server = new WireMockServer(options().dynamicPort());
    private final List<Observation.Context> stopped = new CopyOnWriteArrayList<>();
    private final ObservationRegistry registry = ObservationRegistry.create();

    @BeforeEach
    void start() {
        server.start();
        server.stubFor(post(urlPathMatching(".*chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream")
                .withBody(Sse.stream().text("Hi").finish("stop").done())));
        registry.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public void onStop(Observation.Context context) {
                stopped.add(context);
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }
        });
    }

    @AfterEach
    void stop() {
        server.stop();
    }

    @Test
    void springAisObservationNestsUnderTheCallersObservation() throws Exception {
        OpenAiChatModel model = OpenAiChatModel.builder().observationRegistry(registry)
                .options(OpenAiChatOptions.builder().baseUrl(server.baseUrl() + "/v1").apiKey("sk-test-key")
                        .model("gpt-test").maxRetries(0).timeout(Duration.ofSeconds(10)).build()).build();
        RecordingListener listener = new RecordingListener();
        Observation caller = Observation.start("parley.model.call", registry);

        try (Observation.Scope scope = caller.openScope()) {
            SpringAiModelClient.of(model).stream(new ModelRequest(null, null, List.of(new ModelMessage.User("hi")),
                    List.of()), listener);
        }
        listener.response();
        caller.stop();

        Observation.Context springAi = Await.until(() -> stopped.stream()
                .filter(c -> "gen_ai.client.operation".equals(c.getName())).findFirst(), Optional::isPresent,
                "Spring AI's observation to stop").orElseThrow();
        assertThat(springAi.getParentObservation()).isNotNull();
        assertThat(springAi.getParentObservation().getContextView().getName()).isEqualTo("parley.model.call");
    }
}
