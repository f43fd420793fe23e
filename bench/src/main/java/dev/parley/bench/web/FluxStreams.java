package dev.parley.bench.web;

import dev.parley.chat.spring.ParleyFlux;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.MediaType;
import org.springframework.http.codec.ServerSentEvent;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The run stream on WebFlux, the way the starter's README shows a host writing it with {@link ParleyFlux}: a
 * functional route (an annotated controller method keeps Spring's per-request argument-resolver cache, about
 * 4 KB, for as long as the stream is open).
 */
@Configuration(proxyBeanMethods = false)
public class FluxStreams {
    @Bean
    RouterFunction<ServerResponse> fluxStreams(ParleyFlux flux) {
        return RouterFunctions.route().GET("/flux/runs/{runId}/stream", request -> ServerResponse.ok()
                .contentType(MediaType.TEXT_EVENT_STREAM)
                .body(flux.stream("bench", request.pathVariable("runId"), request.headers().firstHeader("Last-Event-ID")),
                        ServerSentEvent.class))
                .build();
    }
}
