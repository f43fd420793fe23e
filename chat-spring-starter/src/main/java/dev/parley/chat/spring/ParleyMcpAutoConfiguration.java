package dev.parley.chat.spring;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.HostActionSource;
import dev.parley.chat.mcp.McpAccess;
import dev.parley.chat.mcp.McpTools;
import dev.parley.chat.spring.internal.McpServers;
import dev.parley.chat.spring.internal.McpServersConfigured;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;

/**
 * The tools of the MCP servers under {@code parley.mcp.servers} ({@link ParleyMcpProperties}), as one
 * {@link McpTools} bean that the engine offers like any {@link HostActionSource} bean. Active only with
 * {@code chat-mcp} on the classpath and at least one server configured; a configuration that is wrong fails
 * the start-up with a message naming the property. Which tools a run may use: the host's {@link McpAccess}
 * bean if it has one (else every tool), narrowed by each server's {@code allow} and {@code deny} lists.
 *
 * <p>The bean is closed (its stdio processes end) when the context closes, after the {@link ChatEngine},
 * which is created after it.
 */
@AutoConfiguration(before = ParleyAutoConfiguration.class)
@ConditionalOnClass(McpTools.class)
@Conditional(McpServersConfigured.class)
@EnableConfigurationProperties(ParleyMcpProperties.class)
public class ParleyMcpAutoConfiguration {

    @Bean
    @ConditionalOnMissingBean
    public McpTools parleyMcpTools(ParleyMcpProperties properties, ObjectProvider<McpAccess> access) {
        return McpServers.build(properties, access.getIfAvailable(McpAccess::all));
    }
}
