package dev.parley.chat.hermes;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.equalTo;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.matchingJsonPath;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.testing.StreamCollector;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.RunStatus;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Every way a Bridge run can go wrong ends in one RunFailed with a clear code, keeping what came before. */
class BridgeFaultsTest extends AdapterTestSupport {

    @Test
    void connectionRefusedIsRuntimeUnavailable() {
        HermesRuntimeAdapter adapter = adapter("http://127.0.0.1:" + closedPort(), b -> { });

        List<AgentStreamEvent> events = StreamCollector.collect(adapter.generateResponse(request()));

        assertThat(events).hasSize(1);
        AgentStreamEvent.RunFailed failed = (AgentStreamEvent.RunFailed) events.get(0);
        assertThat(failed.code()).isEqualTo("RUNTIME_UNAVAILABLE");
        assertThat(failed.message()).startsWith("cannot reach the Hermes Bridge at 127.0.0.1:");
    }

    @Test
    void aBusySessionIsSessionBusy() {
        wiremock.stubFor(post("/run").willReturn(errorBody(409, "SESSION_BUSY", "session hs-1 has an active run")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().generateResponse(request("hs-1", List.of())));

        assertThat(events).containsExactly(new AgentStreamEvent.RunFailed("SESSION_BUSY", "session hs-1 has an active run"));
    }

    @Test
    void anErrorStatusBeforeTheStreamCarriesTheBridgeCode() {
        wiremock.stubFor(post("/run").willReturn(errorBody(400, "INVALID_REQUEST", "userMessage must not be blank")));

        assertThat(StreamCollector.collect(adapter().generateResponse(request())))
                .containsExactly(new AgentStreamEvent.RunFailed("INVALID_REQUEST", "userMessage must not be blank"));
    }

    @Test
    void aServerErrorWithoutABodyIsNamedByItsStatus() {
        wiremock.stubFor(post("/run").willReturn(aResponse().withStatus(500).withBody("<html>oops</html>")));
        wiremock.stubFor(post("/run").atPriority(1).withRequestBody(matchingJsonPath("$.userMessage", equalTo("gateway")))
                .willReturn(aResponse().withStatus(502)));

        assertThat(StreamCollector.collect(adapter().generateResponse(request())))
                .containsExactly(new AgentStreamEvent.RunFailed("HTTP_500", "HTTP 500"));
        AgentStreamEvent failed = StreamCollector.collect(adapter().generateResponse(
                new dev.parley.chat.runtime.RunRequest("t1", "r2", "alice", "r2:a", "gateway", null, null, null, null, null,
                        null))).get(0);
        assertThat(((AgentStreamEvent.RunFailed) failed).code()).isEqualTo("RUNTIME_UNAVAILABLE");
    }

    @Test
    void aMalformedFrameIsAProtocolErrorAndTheRunIsCancelledOnTheBridge() {
        wiremock.stubFor(post("/run").willReturn(sse("bridge/malformed.sse")));
        wiremock.stubFor(post("/runs/r1/cancel").willReturn(aResponse().withStatus(202).withBody("{\"status\":\"cancelling\"}")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().generateResponse(request()));

        assertThat(events).containsExactly(
                new AgentStreamEvent.RuntimeSession("hs-1", false),
                new AgentStreamEvent.ThinkingDelta("r1:thinking:2", "Hmm"),
                new AgentStreamEvent.TextDelta("r1:answer", "Part "),
                new AgentStreamEvent.RunFailed("PROTOCOL_ERROR", "a frame after seq 3 is not JSON"));
        wiremock.verify(postRequestedFor(urlEqualTo("/runs/r1/cancel")));
    }

    @Test
    void aFrameOfAnUnknownKindIsIgnored() {
        String body = frame(1, "run_started", "\"hermesSessionId\":\"hs-1\",\"resumedSession\":false")
                + frame(2, "hologram", "\"depth\":3") + frame(3, "final", "\"text\":\"ok\"")
                + frame(4, "done", "\"status\":\"completed\"");
        wiremock.stubFor(post("/run").willReturn(aResponse().withHeader("Content-Type", "text/event-stream").withBody(body)));

        assertThat(StreamCollector.collect(adapter().generateResponse(request()))).containsExactly(
                new AgentStreamEvent.RuntimeSession("hs-1", false),
                new AgentStreamEvent.TextFinal("r1:answer", "ok"),
                new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
    }

    @Test
    void anAnswerThatIsNotAnEventStreamIsAProtocolError() {
        wiremock.stubFor(post("/run").willReturn(aResponse().withHeader("Content-Type", "text/html").withBody("<p>hi</p>")));

        AgentStreamEvent.RunFailed failed = (AgentStreamEvent.RunFailed) StreamCollector
                .collect(adapter().generateResponse(request())).get(0);
        assertThat(failed.code()).isEqualTo("PROTOCOL_ERROR");
    }

    @Test
    void aStreamClosedWithoutDoneIsReattachedAfterItsLastSeq() {
        wiremock.stubFor(post("/run").willReturn(sse("bridge/truncated.sse")));
        wiremock.stubFor(get("/runs/r1").willReturn(aResponse().withHeader("Content-Type", "application/json")
                .withBody("{\"runId\":\"r1\",\"status\":\"running\",\"lastSeq\":5}")));
        wiremock.stubFor(get("/runs/r1/events?after=3").willReturn(sse("bridge/after-2.sse")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().generateResponse(request()));

        assertThat(events).containsExactly(
                new AgentStreamEvent.RuntimeSession("hs-1", false),
                new AgentStreamEvent.ThinkingDelta("r1:thinking:2", "Hmm"),
                new AgentStreamEvent.TextDelta("r1:answer", "Part "),
                new AgentStreamEvent.TextDelta("r1:answer", "two"),
                new AgentStreamEvent.TextFinal("r1:answer", "Part two"),
                new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        wiremock.verify(getRequestedFor(urlEqualTo("/runs/r1/events?after=3")));
    }

    @Test
    void aStreamClosedWithoutDoneForARunTheBridgeForgotIsStreamLost() {
        wiremock.stubFor(post("/run").willReturn(sse("bridge/truncated.sse")));
        wiremock.stubFor(get("/runs/r1").willReturn(errorBody(404, "RUN_NOT_FOUND", "no such run")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().generateResponse(request()));

        assertThat(events).hasSize(4);
        assertThat(events.get(2)).isEqualTo(new AgentStreamEvent.TextDelta("r1:answer", "Part "));
        AgentStreamEvent.RunFailed failed = (AgentStreamEvent.RunFailed) events.get(3);
        assertThat(failed.code()).isEqualTo("STREAM_LOST");
        assertThat(failed.message()).contains("without done").contains("no longer knows run r1");
    }

    @Test
    void aConnectionResetMidStreamFailsStreamLostOnceReattachingFails() throws Exception {
        try (RawServer bridge = new RawServer(ex -> {
            if (ex.is("POST", "/run")) {
                ex.streamHead();
                ex.write(frame(1, "run_started", "\"hermesSessionId\":\"hs-1\",\"resumedSession\":false")
                        + frame(2, "text_delta", "\"text\":\"Par\""));
                StreamCollector.sleep(50);
                ex.reset();
            } else if (ex.is("GET", "/runs/r1")) {
                ex.json(200, "{\"runId\":\"r1\",\"status\":\"running\",\"lastSeq\":9}");
            } else if (ex.is("GET", "/runs/r1/events")) {
                ex.reset();
            } else {
                ex.json(202, "{\"status\":\"cancelling\"}");
            }
        })) {
            HermesRuntimeAdapter adapter = adapter(bridge.baseUrl(), b -> b.reattachAttempts(2));

            List<AgentStreamEvent> events = StreamCollector.collect(adapter.generateResponse(request()));

            assertThat(events).hasSize(3);
            assertThat(events.get(1)).isEqualTo(new AgentStreamEvent.TextDelta("r1:answer", "Par"));
            AgentStreamEvent.RunFailed failed = (AgentStreamEvent.RunFailed) events.get(2);
            assertThat(failed.code()).isEqualTo("STREAM_LOST");
            assertThat(failed.message()).contains("broke mid-stream").contains("re-attaching failed 2 times");
            assertThat(bridge.requests()).filteredOn(line -> line.startsWith("GET /runs/r1/events?after=2 ")).hasSize(2);
        }
    }

    @Test
    void aStreamSilentPastTheIdleTimeoutIsStalled() throws Exception {
        try (RawServer bridge = new RawServer(ex -> {
            if (ex.is("POST", "/run") || ex.is("GET", "/runs/r1/events")) {
                ex.streamHead();
                if (ex.is("POST", "/run")) {
                    ex.write(frame(1, "run_started", "\"hermesSessionId\":\"hs-1\",\"resumedSession\":false"));
                }
                StreamCollector.sleep(3000);
            } else if (ex.is("GET", "/runs/r1")) {
                ex.json(200, "{\"runId\":\"r1\",\"status\":\"running\",\"lastSeq\":1}");
            } else {
                ex.json(202, "{\"status\":\"cancelling\"}");
            }
        })) {
            HermesRuntimeAdapter adapter = adapter(bridge.baseUrl(),
                    b -> b.idleTimeout(Duration.ofMillis(300)).reattachAttempts(1));
            long start = System.nanoTime();

            List<AgentStreamEvent> events = StreamCollector.collect(adapter.generateResponse(request()));

            assertThat(events.get(0)).isEqualTo(new AgentStreamEvent.RuntimeSession("hs-1", false));
            assertThat(((AgentStreamEvent.RunFailed) events.get(1)).code()).isEqualTo("STREAM_STALLED");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofMillis(2500));
            assertThat(bridge.requests()).contains("POST /runs/r1/cancel HTTP/1.1");
        }
    }

    @Test
    void anUnknownSessionIsRetriedWithoutItAndSaidSo() throws Exception {
        wiremock.stubFor(post("/run").atPriority(1).withRequestBody(matchingJsonPath("$.sessionId", equalTo("hs-gone")))
                .willReturn(errorBody(410, "SESSION_NOT_FOUND", "unknown session")));
        wiremock.stubFor(post("/run").atPriority(5).willReturn(sse("bridge/fresh-session.sse")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().generateResponse(request("hs-gone", List.of())));

        assertThat(events).hasSize(5);
        AgentStreamEvent.StatusUpdate status = (AgentStreamEvent.StatusUpdate) events.get(0);
        assertThat(status.messageId()).isEqualTo("r1:status:session");
        assertThat(status.level()).isEqualTo("warn");
        assertThat(status.text()).contains("previous session was not found").contains("new session");
        assertThat(events.subList(1, 5)).containsExactly(
                new AgentStreamEvent.RuntimeSession("hs-new", false),
                new AgentStreamEvent.TextDelta("r1:answer", "Hi"),
                new AgentStreamEvent.TextFinal("r1:answer", "Hi"),
                new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        List<String> bodies = wiremock.findAll(postRequestedFor(urlEqualTo("/run"))).stream()
                .map(r -> r.getBodyAsString()).toList();
        assertThat(bodies).hasSize(2);
        ObjectMapper json = new ObjectMapper();
        assertThat(json.readTree(bodies.get(0)).path("sessionId").asText()).isEqualTo("hs-gone");
        assertThat(json.readTree(bodies.get(1)).path("sessionId").isNull()).isTrue();
    }
}
