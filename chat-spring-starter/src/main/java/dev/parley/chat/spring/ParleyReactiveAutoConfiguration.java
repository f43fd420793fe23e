package dev.parley.chat.spring;

import dev.parley.chat.engine.ChatEngine;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;
import org.springframework.http.codec.ServerSentEvent;
import reactor.core.publisher.Flux;

/** The {@link ParleyFlux} helper, when Reactor (e.g. with WebFlux) is on the classpath. */
@AutoConfiguration(after = ParleyAutoConfiguration.class)
@ConditionalOnClass({Flux.class, ServerSentEvent.class})
@ConditionalOnBean(ChatEngine.class)
public class ParleyReactiveAutoConfiguration {
    @Bean
    @ConditionalOnMissingBean
    public ParleyFlux parleyFlux(ChatEngine engine, ParleyProperties properties) {
        return new ParleyFlux(engine, properties.getWeb().getHeartbeat());
    }
}
