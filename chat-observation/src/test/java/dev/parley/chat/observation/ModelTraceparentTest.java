package dev.parley.chat.observation;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.langchain4j.LangChain4jModelClient;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.openai.Sse;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import io.micrometer.observation.Observation;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The trace reaches the model: LangChain4j's OpenAI client, given {@link TraceHeaders} as its per-request
 * headers, sends the model server (WireMock) a W3C {@code traceparent} whose trace is the request that started
 * the run and whose parent is Parley's {@code chat <model>} span. Without a current span it sends none.
 */
class ModelTraceparentTest {
    private final WireMockServer model = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));

    @BeforeEach
    void startModel() {
        model.start();
        model.stubFor(post(urlEqualTo("/v1/chat/completions")).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream")
                .withBody(Sse.stream().text("Hello").finish("stop").usage(5, 1).done())));
    }

    @AfterEach
    void stopModel() {
        model.stop();
    }

    private OpenAiStreamingChatModel openAi(TraceHeaders headers) {
        return OpenAiStreamingChatModel.builder().baseUrl(model.baseUrl() + "/v1").apiKey("test-key")
                .modelName("gpt-test").customHeaders(headers).build();
    }

    @Test
    void theModelServerReceivesTheTraceOfTheRequestThatStartedTheRunUnderParleysModelCall() {
        ExecutorService agentThreads = Executors.newCachedThreadPool();
        try (OtelCapture otel = new OtelCapture()) {
            RunObservations observations = new RunObservations(otel.registry, ObservationSettings.of("agent-loop"));
            LangChain4jModelClient client = LangChain4jModelClient.of(openAi(TraceHeaders.of(otel.tracer,
                    otel.propagator)));
            AgentLoopRuntime runtime = AgentLoopRuntime.builder(observations.modelClient(client, "openai"))
                    .executor(observations.executor(agentThreads)).build();
            try (ChatEngine engine = ChatEngine.builder().store(new InMemoryChatStore()).runtime(runtime)
                    .listener(observations.engineListener()).contextPropagator(observations.contextPropagator())
                    .build()) {
                String threadId = engine.createThread("alice", NewThread.empty()).id();
                Observation request = Observation.start("http.server.requests", otel.registry);
                RunTicket ticket;
                try (Observation.Scope scope = request.openScope()) {
                    ticket = engine.startRun("alice", threadId, StartRun.of("hello"));
                }
                request.stop();
                Await.until(() -> engine.state("alice", ticket.runId()).run().status(), RunStatus::isTerminal, "the end");
                assertThat(engine.state("alice", ticket.runId()).run().status()).isEqualTo(RunStatus.SUCCEEDED);
                Await.until(() -> otel.spans().stream().anyMatch(s -> s.getName().equals("invoke_agent parley")),
                        x -> x, "the run's span");
            }

            SpanData http = otel.span("http.server.requests");
            SpanData call = otel.spans().stream().filter(s -> s.getName().startsWith("chat ")).findFirst().orElseThrow();
            List<LoggedRequest> received = model.findAll(postRequestedFor(urlEqualTo("/v1/chat/completions")));
            assertThat(received).hasSize(1);
            assertThat(received.get(0).getHeader("traceparent"))
                    .isEqualTo("00-" + http.getTraceId() + "-" + call.getSpanId() + "-01");
            assertThat(received.get(0).getHeader("Authorization")).as("the library's own headers stay")
                    .isEqualTo("Bearer test-key");
        } finally {
            agentThreads.shutdownNow();
        }
    }

    @Test
    void withoutACurrentSpanTheHeadersAreEmpty() {
        try (OtelCapture otel = new OtelCapture()) {
            assertThat(TraceHeaders.of(otel.tracer, otel.propagator).get()).isEmpty();
            Observation outside = Observation.start("outside", otel.registry);
            try (Observation.Scope scope = outside.openScope()) {
                assertThat(TraceHeaders.of(otel.tracer, otel.propagator).get()).containsOnlyKeys("traceparent");
            } finally {
                outside.stop();
            }
        }
    }
}
