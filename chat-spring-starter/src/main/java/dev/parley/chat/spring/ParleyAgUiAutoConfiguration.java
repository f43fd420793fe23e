package dev.parley.chat.spring;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.spring.internal.SseStreams;
import dev.parley.chat.spring.internal.agui.AgUiController;
import jakarta.servlet.WriteListener;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * The AG-UI endpoint on a servlet web application ({@code POST {parley.web.base-path}/agui}, see
 * docs/ag-ui.md), on with the other endpoints; {@code parley.web.agui.enabled=false} switches it off alone.
 */
@AutoConfiguration(after = ParleyWebAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({DispatcherServlet.class, WriteListener.class})
@ConditionalOnBean({ChatEngine.class, OwnerResolver.class, SseStreams.class})
@ConditionalOnBooleanProperty(name = "parley.web.enabled", matchIfMissing = true)
public class ParleyAgUiAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "parley.web.agui.enabled", matchIfMissing = true)
    public AgUiController parleyAgUiController(ChatEngine engine, OwnerResolver owners, SseStreams streams,
            ParleyProperties properties, ObjectProvider<ClientContextFilter> contextFilter) {
        return new AgUiController(engine, owners, ParleyWebAutoConfiguration.originCheck(properties), streams,
                ParleyWebAutoConfiguration.jsonBodies(properties),
                ParleyWebAutoConfiguration.clientContexts(properties, contextFilter));
    }
}
