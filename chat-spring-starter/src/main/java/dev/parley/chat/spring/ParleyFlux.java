package dev.parley.chat.spring;

import dev.parley.chat.ChatException;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;
import java.time.Duration;
import java.util.concurrent.Flow;
import org.jspecify.annotations.Nullable;
import org.springframework.http.codec.ServerSentEvent;
import reactor.adapter.JdkFlowAdapter;
import reactor.core.publisher.Flux;

/**
 * A run's events as a {@code Flux<ServerSentEvent<String>>}, for WebFlux controllers: each event with
 * {@code id} = seq, {@code event} = type and the run event's JSON as data, heartbeat comments while the
 * run is quiet, completing after the terminal event. Cancelling the flux (the client left) never stops
 * the run. Thread-safe.
 */
public final class ParleyFlux {
    private final ChatEngine engine;
    private final Duration heartbeat;

    public ParleyFlux(ChatEngine engine, Duration heartbeat) {
        this.engine = engine;
        this.heartbeat = heartbeat;
    }

    /**
     * The events after {@code lastEventId} (null: from the start).
     *
     * @throws ChatException NOT_FOUND or INVALID_INPUT at once, before anything is streamed
     */
    public Flux<ServerSentEvent<String>> stream(String ownerId, String runId, @Nullable String lastEventId) {
        Flow.Publisher<RunEvent> publisher = engine.subscribe(ownerId, runId, ParleySse.parseCursor(lastEventId));
        Flux<ServerSentEvent<String>> events = JdkFlowAdapter.flowPublisherToFlux(publisher)
                .map(event -> ServerSentEvent.builder(ChatJson.shared().write(event))
                        .id(Long.toString(event.seq()))
                        .event(event.type())
                        .build());
        Flux<ServerSentEvent<String>> pings = Flux.interval(heartbeat, heartbeat)
                .map(tick -> ServerSentEvent.<String>builder().comment("ping").build());
        return events.publish(shared -> Flux.merge(shared, pings.takeUntilOther(shared.ignoreElements())));
    }
}
