package dev.parley.chat.spring;

import dev.parley.chat.ChatException;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.spring.internal.AttachmentsController;
import dev.parley.chat.spring.internal.ChatController;
import dev.parley.chat.spring.internal.ClientContexts;
import dev.parley.chat.spring.internal.JsonBodies;
import dev.parley.chat.spring.internal.MessagesController;
import dev.parley.chat.spring.internal.OriginCheck;
import dev.parley.chat.spring.internal.OwnerResolvers;
import dev.parley.chat.spring.internal.RunInputsController;
import dev.parley.chat.spring.internal.SseStreams;
import dev.parley.chat.spring.internal.tomcat.TomcatBuffers;
import jakarta.servlet.WriteListener;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * Parley on a servlet web application: the owner resolver, the SSE helper ({@link ParleySse}) and the REST
 * + SSE endpoints (switch them off with {@code parley.web.enabled=false}), which refuse state-changing
 * requests from other origins than {@code parley.web.allowed-origins} and pass the context clients send
 * through a {@link ClientContextFilter} bean if there is one. The browser client is served
 * from the starter's jar at {@code /parley/parley-client.js} and {@code /parley/reducer.js}. On Tomcat,
 * {@code parley.web.tomcat.*} ({@link ParleyTomcatProperties}) shrinks the buffers each open stream holds.
 */
@AutoConfiguration(after = ParleyAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({DispatcherServlet.class, WriteListener.class})
@ConditionalOnBean(ChatEngine.class)
public class ParleyWebAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public OwnerResolver parleyOwnerResolver(ParleyProperties properties, ApplicationContext context) {
        return OwnerResolvers.fromProperties(properties.getOwner(), context.getClassLoader());
    }

    @Bean(destroyMethod = "close")
    @ConditionalOnMissingBean
    public SseStreams parleySseStreams(ParleyProperties properties) {
        ParleyProperties.Web web = properties.getWeb();
        long buffer = web.getStreamBufferSize().toBytes();
        if (buffer > Integer.MAX_VALUE) {
            throw ChatException.configuration("parley.web.stream-buffer-size must be under 2 GB, got " + web.getStreamBufferSize());
        }
        return new SseStreams(web.getHeartbeat(), (int) buffer, web.getStreamWriteTimeout());
    }

    @Bean
    @ConditionalOnMissingBean
    public ParleySse parleySse(ChatEngine engine, SseStreams streams) {
        return new ParleySse(engine, streams);
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "parley.web.enabled", matchIfMissing = true)
    public ChatController parleyChatController(ChatEngine engine, OwnerResolver owners, ParleySse sse,
            ParleyProperties properties, ObjectProvider<ClientContextFilter> contextFilter) {
        return new ChatController(engine, owners, originCheck(properties), sse, jsonBodies(properties),
                clientContexts(properties, contextFilter));
    }

    /** The endpoints on one message (regenerate, edit, activate, feedback), switched with the others. */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "parley.web.enabled", matchIfMissing = true)
    public MessagesController parleyMessagesController(ChatEngine engine, OwnerResolver owners,
            ParleyProperties properties, ObjectProvider<ClientContextFilter> contextFilter) {
        return new MessagesController(engine, owners, originCheck(properties), jsonBodies(properties),
                clientContexts(properties, contextFilter));
    }

    /** The attachment endpoints (upload, download), switched with the others. */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "parley.web.enabled", matchIfMissing = true)
    public AttachmentsController parleyAttachmentsController(ChatEngine engine, OwnerResolver owners,
            ParleyProperties properties) {
        return new AttachmentsController(engine, owners, originCheck(properties));
    }

    /** The run-state and answer endpoints (pending inputs), switched with the others. */
    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "parley.web.enabled", matchIfMissing = true)
    public RunInputsController parleyRunInputsController(ChatEngine engine, OwnerResolver owners,
            ParleyProperties properties) {
        return new RunInputsController(engine, owners, originCheck(properties), jsonBodies(properties));
    }

    /** The Origin rule of the endpoints that change something, with {@code parley.web.allowed-origins}. */
    static OriginCheck originCheck(ParleyProperties properties) {
        return new OriginCheck(properties.getWeb().getAllowedOrigins());
    }

    static JsonBodies jsonBodies(ParleyProperties properties) {
        return new JsonBodies(properties.getWeb().getMaxRequestBytes());
    }

    /** What becomes of the context clients send: {@code parley.web.accept-client-context}, the host's filter. */
    static ClientContexts clientContexts(ParleyProperties properties, ObjectProvider<ClientContextFilter> filter) {
        return new ClientContexts(properties.getWeb().isAcceptClientContext(), filter.getIfUnique());
    }

    /** {@code parley.web.tomcat.*} on the host's Tomcat (nothing changes while they are unset). */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = {"org.apache.coyote.http11.Http11NioProtocol",
        "org.springframework.boot.tomcat.servlet.TomcatServletWebServerFactory"})
    @EnableConfigurationProperties(ParleyTomcatProperties.class)
    static class TomcatSettings {
        @Bean
        @ConditionalOnMissingBean
        TomcatBuffers parleyTomcatBuffers(ParleyTomcatProperties properties) {
            return new TomcatBuffers(properties);
        }
    }
}
