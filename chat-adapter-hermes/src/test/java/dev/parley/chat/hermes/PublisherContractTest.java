package dev.parley.chat.hermes;

import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.testing.StreamCollector;
import dev.parley.chat.event.AgentStreamEvent;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The publisher honours demand, and cancelling the subscription closes the HTTP connection. */
class PublisherContractTest extends AdapterTestSupport {

    @Test
    void onlyRequestedEventsAreDelivered() {
        wiremock.stubFor(post("/run").willReturn(sse("bridge/twenty-deltas.sse")));
        StreamCollector collector = StreamCollector.requesting(1);

        adapter().generateResponse(request()).subscribe(collector);
        collector.awaitCount(1);
        StreamCollector.sleep(300);

        assertThat(collector.events()).containsExactly(new AgentStreamEvent.RuntimeSession("hs-1", false));
        collector.request(2);
        collector.awaitCount(3);
        StreamCollector.sleep(100);
        assertThat(collector.events()).hasSize(3);
        collector.request(Long.MAX_VALUE);
        collector.awaitDone().assertContract();
        assertThat(collector.events()).hasSize(23);
    }

    @Test
    void cancellingTheSubscriptionClosesTheConnectionWithoutCancellingTheRun() throws Exception {
        CountDownLatch clientGone = new CountDownLatch(1);
        try (RawServer bridge = new RawServer(ex -> {
            if (!ex.is("POST", "/run")) {
                ex.json(202, "{\"status\":\"cancelling\"}");
                return;
            }
            ex.streamHead();
            ex.write(frame(1, "run_started", "\"hermesSessionId\":\"hs-1\",\"resumedSession\":false"));
            try {
                for (int i = 0; i < 400; i++) {
                    ex.write(": ping\n\n");
                    StreamCollector.sleep(25);
                }
            } catch (java.io.IOException closed) {
                clientGone.countDown();
            }
        })) {
            StreamCollector collector = StreamCollector.unbounded();
            adapter(bridge.baseUrl(), b -> { }).generateResponse(request()).subscribe(collector);
            collector.awaitCount(1);

            collector.cancel();

            assertThat(clientGone.await(5, TimeUnit.SECONDS)).as("the server saw the connection close").isTrue();
            assertThat(bridge.requests()).containsExactly("POST /run HTTP/1.1");
            StreamCollector.sleep(100);
            assertThat(collector.events()).hasSize(1);
        }
    }

    @Test
    void aPublisherTakesOneSubscriber() {
        wiremock.stubFor(post("/run").willReturn(sse("bridge/fresh-session.sse")));
        var publisher = adapter().generateResponse(request());
        StreamCollector first = StreamCollector.unbounded();
        publisher.subscribe(first);
        StreamCollector second = StreamCollector.unbounded();
        publisher.subscribe(second);

        first.awaitDone().assertContract();
        second.awaitDone();
        assertThat(second.events()).isEmpty();
    }
}
