package dev.parley.bench.web;

import dev.parley.chat.spring.ParleyFlux;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;

/** The run stream on WebFlux, the way the starter's README shows a host writing it with {@link ParleyFlux}. */
@RestController
public class FluxStreams {
    private final ParleyFlux flux;

    public FluxStreams(ParleyFlux flux) {
        this.flux = flux;
    }

    @GetMapping(path = "/flux/runs/{runId}/stream", produces = MediaType.TEXT_EVENT_STREAM_VALUE)
    public Flux<ServerSentEvent<String>> stream(@PathVariable("runId") String runId,
            @RequestHeader(name = "Last-Event-ID", required = false) String lastEventId) {
        return flux.stream("bench", runId, lastEventId);
    }
}
