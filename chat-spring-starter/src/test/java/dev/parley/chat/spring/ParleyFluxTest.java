package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.SlowConsumerException;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import org.springframework.http.codec.ServerSentEvent;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.scheduler.Schedulers;

/** {@link ParleyFlux} on an engine of its own: demand reaches the engine, so a slow reader buffers nothing. */
class ParleyFluxTest {
    private static final String ALICE = "alice";
    private ChatEngine engine;

    @AfterEach
    void close() {
        if (engine != null) {
            engine.close();
        }
    }

    /** A subscriber that records how its stream ended. */
    private abstract static class Reader extends BaseSubscriber<ServerSentEvent<String>> {
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final CountDownLatch ended = new CountDownLatch(1);

        @Override
        protected void hookOnError(Throwable error) {
            failure.set(error);
            ended.countDown();
        }

        @Override
        protected void hookOnComplete() {
            ended.countDown();
        }
    }

    @Test
    void aReaderThatStopsRequestingIsCutOffByTheEngineInsteadOfBufferingTheRun() throws Exception {
        engine = ChatEngine.builder().store(new InMemoryChatStore())
                .runtime(ScriptedRuntime.playing(Scripts.slow(400, 1)))
                .limits(EngineLimits.defaults().withSubscriberLagLimit(20)).build();
        String thread = engine.createThread(ALICE, NewThread.empty()).id();
        String runId = engine.startRun(ALICE, thread, StartRun.of("go")).runId();
        List<ServerSentEvent<String>> received = new CopyOnWriteArrayList<>();

        Reader reader = new Reader() {
            @Override
            protected void hookOnSubscribe(Subscription subscription) {
                subscription.request(1);
            }

            @Override
            protected void hookOnNext(ServerSentEvent<String> event) {
                received.add(event);
            }
        };
        new ParleyFlux(engine, Duration.ofSeconds(30)).stream(ALICE, runId, null).subscribe(reader);

        assertThat(reader.ended.await(20, TimeUnit.SECONDS)).as("the stream ends").isTrue();
        assertThat(reader.failure.get()).isInstanceOf(SlowConsumerException.class);
        assertThat(received).hasSize(1);
    }

    /**
     * Heartbeats every 5 ms take the reader's demand while a run sends 40 deltas 15 ms apart, and the reader
     * asks for 2 more only 20 ms after it got what it asked for, so events the engine was asked for meet a
     * reader that wants nothing: it never gets more than it asked for, and still gets every event once, in
     * order, and the end.
     */
    @Test
    void heartbeatsTakeDemandWithoutLosingOrOverrunningEvents() throws Exception {
        engine = ChatEngine.builder().store(new InMemoryChatStore())
                .runtime(ScriptedRuntime.playing(Scripts.slow(40, 15))).build();
        String thread = engine.createThread(ALICE, NewThread.empty()).id();
        String runId = engine.startRun(ALICE, thread, StartRun.of("go")).runId();
        List<Long> seqs = new CopyOnWriteArrayList<>();
        AtomicReference<String> violation = new AtomicReference<>();
        AtomicInteger pings = new AtomicInteger();
        AtomicInteger outstanding = new AtomicInteger();

        Reader reader = new Reader() {
            @Override
            protected void hookOnSubscribe(Subscription subscription) {
                outstanding.set(2);
                subscription.request(2);
            }

            @Override
            protected void hookOnNext(ServerSentEvent<String> event) {
                if (outstanding.decrementAndGet() < 0) {
                    violation.set("got more than asked for at " + event);
                }
                if (event.id() == null) {
                    pings.incrementAndGet();
                } else {
                    seqs.add(Long.parseLong(event.id()));
                }
                if (outstanding.get() == 0) {
                    Schedulers.single().schedule(() -> {
                        outstanding.addAndGet(2);
                        request(2);
                    }, 20, TimeUnit.MILLISECONDS);
                }
            }
        };
        new ParleyFlux(engine, Duration.ofMillis(5)).stream(ALICE, runId, null).subscribe(reader);

        assertThat(reader.ended.await(20, TimeUnit.SECONDS)).as("the stream ends").isTrue();
        assertThat(reader.failure.get()).isNull();
        assertThat(violation.get()).isNull();
        assertThat(pings.get()).as("heartbeats between the deltas").isGreaterThan(10);
        assertThat(seqs).hasSizeGreaterThan(40);
        for (int i = 0; i < seqs.size(); i++) {
            assertThat(seqs.get(i)).isEqualTo(i + 1L);
        }
        assertThat(seqs.get(seqs.size() - 1)).isEqualTo(engine.state(ALICE, runId).lastSeq());
    }

    @Test
    void aHeartbeatThatIsNotPositiveIsRefused() {
        engine = ChatEngine.builder().store(new InMemoryChatStore())
                .runtime(ScriptedRuntime.playing(Scripts.instant("hi"))).build();
        assertThatThrownBy(() -> new ParleyFlux(engine, Duration.ZERO))
                .isInstanceOfSatisfying(ChatException.class,
                        e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIGURATION)).hasMessageContaining("heartbeat");
    }
}
