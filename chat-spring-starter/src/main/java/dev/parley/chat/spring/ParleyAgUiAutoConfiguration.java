package dev.parley.chat.spring;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.spring.internal.OriginCheck;
import dev.parley.chat.spring.internal.SseStreams;
import dev.parley.chat.spring.internal.agui.AgUiController;
import dev.parley.chat.spring.internal.agui.CopilotKitController;
import dev.parley.chat.spring.internal.agui.CopilotKitCors;
import java.util.ArrayList;
import java.util.List;
import jakarta.servlet.WriteListener;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * The AG-UI endpoint on a servlet web application ({@code POST {parley.web.base-path}/agui}, see
 * docs/ag-ui.md), on with the other endpoints; {@code parley.web.agui.enabled=false} switches it off alone.
 * With it, CopilotKit's runtime protocol at {@code {parley.web.base-path}/copilotkit} and its CORS answers
 * ({@link ParleyCopilotKitProperties}); {@code parley.web.copilotkit.enabled=false} switches them off alone.
 */
@AutoConfiguration(after = ParleyWebAutoConfiguration.class)
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({DispatcherServlet.class, WriteListener.class})
@ConditionalOnBean({ChatEngine.class, OwnerResolver.class, SseStreams.class})
@ConditionalOnBooleanProperty(name = "parley.web.enabled", matchIfMissing = true)
@EnableConfigurationProperties(ParleyCopilotKitProperties.class)
public class ParleyAgUiAutoConfiguration {
    /** Runs before Spring Security's filters (at -100 by default): preflights carry no credentials. */
    private static final int CORS_FILTER_ORDER = -110;

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = "parley.web.agui.enabled", matchIfMissing = true)
    public AgUiController parleyAgUiController(ChatEngine engine, OwnerResolver owners, SseStreams streams,
            ParleyProperties properties, ObjectProvider<ClientContextFilter> contextFilter) {
        return new AgUiController(engine, owners, ParleyWebAutoConfiguration.originCheck(properties), streams,
                ParleyWebAutoConfiguration.jsonBodies(properties),
                ParleyWebAutoConfiguration.clientContexts(properties, contextFilter), downloadPath(properties));
    }

    /** Where the attachment endpoint serves a file: this prefix and its id. */
    static String downloadPath(ParleyProperties properties) {
        return properties.getWeb().getBasePath() + "/attachments/";
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBooleanProperty(name = {"parley.web.agui.enabled", "parley.web.copilotkit.enabled"}, matchIfMissing = true)
    public CopilotKitController parleyCopilotKitController(ChatEngine engine, OwnerResolver owners, SseStreams streams,
            ParleyProperties properties, ParleyCopilotKitProperties copilotKit,
            ObjectProvider<ClientContextFilter> contextFilter) {
        List<String> origins = new ArrayList<>(properties.getWeb().getAllowedOrigins());
        origins.addAll(corsOrigins(copilotKit));
        return new CopilotKitController(engine, owners, new OriginCheck(origins), streams,
                ParleyWebAutoConfiguration.jsonBodies(properties),
                ParleyWebAutoConfiguration.clientContexts(properties, contextFilter), copilotKit.getAgentDescription(),
                copilotKit.isTrustOwnerHeader(), downloadPath(properties));
    }

    /** The CopilotKit endpoint's CORS answers, on its paths only, before the host's security filters. */
    @Bean
    @ConditionalOnMissingBean(name = "parleyCopilotKitCors")
    @ConditionalOnBooleanProperty(name = {"parley.web.agui.enabled", "parley.web.copilotkit.enabled"}, matchIfMissing = true)
    public FilterRegistrationBean<CopilotKitCors> parleyCopilotKitCors(ParleyProperties properties,
            ParleyCopilotKitProperties copilotKit) {
        String path = properties.getWeb().getBasePath() + copilotKit.getPath();
        FilterRegistrationBean<CopilotKitCors> registration = new FilterRegistrationBean<>(
                new CopilotKitCors(new OriginCheck(corsOrigins(copilotKit), "parley.web.copilotkit.allowed-origins")));
        registration.addUrlPatterns(path, path + "/*");
        registration.setOrder(CORS_FILTER_ORDER);
        return registration;
    }

    /** The CopilotKit endpoint's allowed origins, checked: exact origins only. */
    private static List<String> corsOrigins(ParleyCopilotKitProperties copilotKit) {
        new OriginCheck(copilotKit.getAllowedOrigins(), "parley.web.copilotkit.allowed-origins");
        return copilotKit.getAllowedOrigins();
    }
}
