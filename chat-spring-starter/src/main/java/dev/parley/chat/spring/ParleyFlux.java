package dev.parley.chat.spring;

import dev.parley.chat.ChatException;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;
import java.time.Duration;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.springframework.http.codec.ServerSentEvent;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.FluxSink;
import reactor.core.scheduler.Schedulers;

/**
 * A run's events as a {@code Flux<ServerSentEvent<String>>}, for WebFlux controllers: each event with
 * {@code id} = seq, {@code event} = type and the run event's JSON as data, heartbeat comments while the
 * run is quiet, completing after the terminal event. Cancelling the flux (the client left) never stops
 * the run. Thread-safe.
 *
 * <p>Each subscription is one engine subscription feeding one sink, with the downstream's demand passed
 * on to the engine; heartbeats come from Reactor's shared parallel scheduler. An idle stream costs a few
 * hundred bytes here, so WebFlux hosts can hold many thousands of open streams.
 *
 * <p>For WebFlux: Spring MVC writes a returned {@code Flux} with blocking writes on its task executor, so
 * clients that stop reading would hold its threads; MVC controllers use {@link ParleySse}.
 */
public final class ParleyFlux {
    private static final ServerSentEvent<String> PING = ServerSentEvent.<String>builder().comment("ping").build();

    private final ChatEngine engine;
    private final Duration heartbeat;

    /**
     * @param heartbeat how often a heartbeat comment is sent on every open stream; must be positive
     * @throws IllegalArgumentException for a heartbeat that is not positive
     */
    public ParleyFlux(ChatEngine engine, Duration heartbeat) {
        if (heartbeat.isZero() || heartbeat.isNegative()) {
            throw new IllegalArgumentException("the heartbeat interval must be positive, got " + heartbeat);
        }
        this.engine = engine;
        this.heartbeat = heartbeat;
    }

    /**
     * The events after {@code lastEventId} (null: from the start). Each subscription to the flux reads
     * the run from that cursor.
     *
     * @throws ChatException NOT_FOUND or INVALID_INPUT at once, before anything is streamed
     */
    public Flux<ServerSentEvent<String>> stream(String ownerId, String runId, @Nullable String lastEventId) {
        Flow.Publisher<RunEvent> publisher = engine.subscribe(ownerId, runId, ParleySse.parseCursor(lastEventId));
        long heartbeatMillis = Math.max(1, heartbeat.toMillis());
        return Flux.create(sink -> publisher.subscribe(new SinkFeeder(sink, heartbeatMillis)),
                FluxSink.OverflowStrategy.BUFFER);
    }

    /** Feeds one sink from one engine subscription, plus heartbeats. */
    private static final class SinkFeeder implements Flow.Subscriber<RunEvent> {
        private final FluxSink<ServerSentEvent<String>> sink;
        private final long heartbeatMillis;
        private volatile @Nullable Disposable heartbeats;

        SinkFeeder(FluxSink<ServerSentEvent<String>> sink, long heartbeatMillis) {
            this.sink = sink;
            this.heartbeatMillis = heartbeatMillis;
        }

        @Override
        public void onSubscribe(Flow.Subscription subscription) {
            heartbeats = Schedulers.parallel().schedulePeriodically(() -> sink.next(PING),
                    heartbeatMillis, heartbeatMillis, TimeUnit.MILLISECONDS);
            sink.onDispose(() -> {
                stopHeartbeats();
                subscription.cancel();
            });
            sink.onRequest(subscription::request);
        }

        @Override
        public void onNext(RunEvent event) {
            sink.next(ServerSentEvent.builder(ChatJson.shared().write(event))
                    .id(Long.toString(event.seq()))
                    .event(event.type())
                    .build());
        }

        @Override
        public void onError(Throwable error) {
            stopHeartbeats();
            sink.error(error);
        }

        @Override
        public void onComplete() {
            stopHeartbeats();
            sink.complete();
        }

        private void stopHeartbeats() {
            Disposable task = heartbeats;
            if (task != null) {
                task.dispose();
            }
        }
    }
}
