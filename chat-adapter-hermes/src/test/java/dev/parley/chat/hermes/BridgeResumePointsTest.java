package dev.parley.chat.hermes;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.ResumableSubscriber;
import dev.parley.chat.testing.RecordingSubscriber;
import dev.parley.chat.testing.StreamCollector;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Where a Bridge stream stands, reported after every frame, and a re-attachment from there: it maps the
 * frames after it exactly as the first stream would have (the same thinking message goes on), and a run the
 * Bridge no longer knows ends INTERRUPTED.
 */
class BridgeResumePointsTest extends AdapterTestSupport {

    /** Each event, with the resume point the stream reported last before it. */
    static final class PointCollector extends RecordingSubscriber<AgentStreamEvent, PointCollector>
            implements ResumableSubscriber<AgentStreamEvent> {
        final List<String> pointBefore = new ArrayList<>();
        private volatile String lastPoint;

        PointCollector() {
            super(Long.MAX_VALUE);
        }

        @Override
        public void onNext(AgentStreamEvent item) {
            pointBefore.add(item.type() + " after " + lastPoint);
            super.onNext(item);
        }

        @Override
        public void onResumePoint(String resumeToken) {
            lastPoint = resumeToken;
        }

        List<AgentStreamEvent> events() {
            return items();
        }
    }

    @Test
    void afterEveryFrameTheStreamSaysWhichOneItHandledAndWhichThinkingBlockIsOpen() {
        wiremock.stubFor(post("/run").willReturn(sse("bridge/all-kinds.sse")));
        PointCollector collector = new PointCollector();

        adapter().generateResponse(request("s-old", List.of())).subscribe(collector);

        collector.awaitDone();
        assertThat(collector.pointBefore).containsExactly(
                "runtime_session after 0",
                "status after 1",
                "thinking_delta after 2",
                "thinking_delta after 3;thinking=3",
                "tool_call_start after 4;thinking=3",
                "tool_call_result after 5",
                "thinking_delta after 6",
                "todos after 7;thinking=7",
                "input_requested after 8;thinking=7",
                "input_requested after 10",
                "input_resolved after 11",
                "text_delta after 12",
                "text_delta after 13",
                "runtime_session after 14",
                "usage after 15",
                "text_final after 17",
                "run_finished after 18");
    }

    /**
     * The host restarted while a thinking block was open (after frame 4 of a block begun at frame 3): the
     * re-attached stream asks for the frames after 4, and the next thinking frame joins the same message.
     */
    @Test
    void aReattachmentContinuesAfterTheFrameAndInsideTheThinkingBlockItsTokenNames() {
        wiremock.stubFor(get("/runs/r1").willReturn(aResponse().withStatus(200).withHeader("Content-Type",
                "application/json").withBody("{\"runId\":\"r1\",\"status\":\"running\",\"lastSeq\":6}")));
        wiremock.stubFor(get("/runs/r1/events?after=4").willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream")
                .withBody(frame(5, "thinking", "\"text\":\" more\"") + frame(6, "text_delta", "\"text\":\"Done\"")
                        + frame(7, "final", "\"text\":\"Done\"")
                        + frame(8, "done", "\"status\":\"completed\",\"hermesSessionId\":\"hs-1\""))));
        PointCollector collector = new PointCollector();

        adapter().reattach(request("hs-1", List.of()), "4;thinking=3").subscribe(collector);

        assertThat(collector.awaitDone().events()).containsExactly(
                new AgentStreamEvent.ThinkingDelta("r1:thinking:3", " more"),
                new AgentStreamEvent.TextDelta("r1:answer", "Done"),
                new AgentStreamEvent.TextFinal("r1:answer", "Done"),
                new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        assertThat(collector.pointBefore).first().isEqualTo("thinking_delta after 4;thinking=3");
        wiremock.verify(getRequestedFor(urlEqualTo("/runs/r1/events?after=4")));
    }

    @Test
    void aRunTheBridgeNoLongerKnowsEndsInterruptedWhenReattachedAfterARestart() {
        wiremock.stubFor(get("/runs/r1").willReturn(errorBody(404, "RUN_NOT_FOUND", "no such run")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().reattach(request(), "9;thinking=8"));

        assertThat(events).singleElement().isInstanceOfSatisfying(AgentStreamEvent.RunFinished.class, end -> {
            assertThat(end.status()).isEqualTo(RunStatus.INTERRUPTED);
            assertThat(end.reason()).contains("no longer knows run r1");
        });
    }

    /** A run the host cannot follow is cancelled on the Bridge; one the Bridge forgot is no error. */
    @Test
    void anOrphanIsCancelledOnTheBridgeAndAnUnknownOneIsNoError() {
        wiremock.stubFor(post("/runs/r1/cancel").willReturn(aResponse().withStatus(202).withBody("{\"status\":\"cancelling\"}")));
        wiremock.stubFor(post("/runs/gone/cancel").willReturn(errorBody(404, "RUN_NOT_FOUND", "no such run")));
        HermesRuntimeAdapter adapter = adapter();

        adapter.stopOrphan("r1", "17");
        assertThatCode(() -> adapter.stopOrphan("gone", null)).doesNotThrowAnyException();

        wiremock.verify(postRequestedFor(urlEqualTo("/runs/r1/cancel")));
        wiremock.verify(postRequestedFor(urlEqualTo("/runs/gone/cancel")));
    }
}
