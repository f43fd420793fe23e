package dev.parley.chat.observation;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.verification.LoggedRequest;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import io.micrometer.core.instrument.binder.okhttp3.OkHttpObservationInterceptor;
import io.micrometer.observation.Observation;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.util.List;
import okhttp3.OkHttpClient;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The W3C {@code traceparent} of the request that started a run reaches the runtime: a Hermes Bridge (WireMock)
 * receives the run's trace id on {@code POST /run}, sent by the adapter's own thread.
 */
class TraceparentTest {
    private static final String SSE = """
            id: 1
            event: run_started
            data: {"runId":"r1","seq":1,"ts":1795000000001,"kind":"run_started","sessionId":null,"hermesSessionId":"hs-1","resumedSession":false}

            id: 2
            event: final
            data: {"runId":"r1","seq":2,"ts":1795000000002,"kind":"final","text":"Hi"}

            id: 3
            event: done
            data: {"runId":"r1","seq":3,"ts":1795000000003,"kind":"done","status":"completed","hermesSessionId":"hs-1"}

            """;

    private final WireMockServer bridge = new WireMockServer(options().dynamicPort());

    @BeforeEach
    void startBridge() {
        bridge.start();
        bridge.stubFor(post("/run").willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream").withBody(SSE)));
    }

    @AfterEach
    void stopBridge() {
        bridge.stop();
    }

    @Test
    void theBridgeReceivesTheTraceOfTheRequestThatStartedTheRun() {
        try (OtelCapture otel = new OtelCapture()) {
            RunObservations observations = new RunObservations(otel.registry, ObservationSettings.of("hermes"));
            OkHttpClient http = new OkHttpClient.Builder()
                    .addInterceptor(OkHttpObservationInterceptor.builder(otel.registry, "okhttp.requests").build())
                    .build();
            HermesRuntimeAdapter hermes = new HermesRuntimeAdapter(HermesConfig.builder().baseUrl(bridge.baseUrl())
                    .httpClient(http).taskDecorator(observations.taskDecorator()).build());
            try (ChatEngine engine = ChatEngine.builder().store(new InMemoryChatStore()).runtime(hermes)
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
                Await.until(() -> otel.spans().stream().anyMatch(s -> s.getName().equals("invoke_agent parley")),
                        x -> x, "the run's span");
            } finally {
                hermes.close();
            }

            SpanData http1 = otel.span("http.server.requests");
            SpanData run = otel.span("invoke_agent parley");
            SpanData call = otel.spans().stream().filter(s -> s.getName().equals("POST")).findFirst().orElseThrow();
            List<LoggedRequest> received = bridge.findAll(postRequestedFor(urlEqualTo("/run")));
            assertThat(received).hasSize(1);
            assertThat(received.get(0).getHeader("traceparent"))
                    .isEqualTo("00-" + http1.getTraceId() + "-" + call.getSpanId() + "-01");
            assertThat(run.getTraceId()).isEqualTo(http1.getTraceId());
            assertThat(call.getParentSpanId()).isEqualTo(run.getSpanId());
        }
    }
}
