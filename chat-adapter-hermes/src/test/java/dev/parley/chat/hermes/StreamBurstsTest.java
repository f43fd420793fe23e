package dev.parley.chat.hermes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.runtime.BurstAwareSubscriber;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The frames of one read from the socket reach a burst-aware subscriber as one burst, and the burst ends
 * before the adapter waits for the network: nothing it read is held back while the peer is silent.
 */
class StreamBurstsTest extends AdapterTestSupport {

    /** Records "[", "]", each text delta's text, and "done". */
    private static final class BurstRecorder implements BurstAwareSubscriber<AgentStreamEvent> {
        final List<String> signals = new CopyOnWriteArrayList<>();
        final CountDownLatch firstChunkShown = new CountDownLatch(1);
        final CountDownLatch done = new CountDownLatch(1);

        @Override
        public void onSubscribe(Flow.Subscription subscription) {
            subscription.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(AgentStreamEvent event) {
            if (event instanceof AgentStreamEvent.TextDelta text) {
                signals.add(text.delta());
            } else if (event.isTerminal()) {
                signals.add("terminal");
            }
        }

        @Override
        public void onBurstStart() {
            signals.add("[");
        }

        @Override
        public void onBurstEnd() {
            signals.add("]");
            if (signals.contains("two")) {
                firstChunkShown.countDown();
            }
        }

        @Override
        public void onError(Throwable throwable) {
            signals.add("error");
            done.countDown();
        }

        @Override
        public void onComplete() {
            signals.add("done");
            done.countDown();
        }
    }

    @Test
    void aReadsFramesAreOneBurstThatEndsBeforeTheAdapterWaitsForMore() throws Exception {
        BurstRecorder recorder = new BurstRecorder();
        List<String> seenByPeerWhileSilent = new ArrayList<>();
        try (RawServer bridge = new RawServer(ex -> {
            if (ex.is("POST", "/run")) {
                ex.streamHead();
                ex.write(frame(1, "run_started", "\"hermesSessionId\":\"hs-1\",\"resumedSession\":false")
                        + frame(2, "text_delta", "\"text\":\"one\"") + frame(3, "text_delta", "\"text\":\"two\""));
                // silent until the subscriber was told the burst is over (or long enough to show it never is)
                recorder.firstChunkShown.await(5, TimeUnit.SECONDS);
                seenByPeerWhileSilent.addAll(recorder.signals);
                ex.write(frame(4, "text_delta", "\"text\":\"three\"") + frame(5, "done", "\"status\":\"completed\""));
            } else {
                ex.json(202, "{\"status\":\"cancelling\"}");
            }
        })) {
            adapter(bridge.baseUrl(), b -> {
            }).generateResponse(request()).subscribe(recorder);

            assertThat(recorder.done.await(10, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(seenByPeerWhileSilent).endsWith("one", "two", "]");
        assertThat(recorder.signals).endsWith("[", "three", "terminal", "]", "done");
        assertBalanced(recorder.signals);
    }

    /** Every burst closes before the next opens and before the stream ends. */
    private static void assertBalanced(List<String> signals) {
        boolean open = false;
        for (String signal : signals) {
            if (signal.equals("[")) {
                assertThat(open).as("a burst opened inside another: %s", signals).isFalse();
                open = true;
            } else if (signal.equals("]")) {
                assertThat(open).as("a burst closed that was not open: %s", signals).isTrue();
                open = false;
            } else if (signal.equals("done") || signal.equals("error")) {
                assertThat(open).as("the stream ended inside a burst: %s", signals).isFalse();
            }
        }
    }
}
