package dev.parley.chat.spring.internal;

import org.springframework.boot.autoconfigure.condition.ConditionOutcome;
import org.springframework.boot.autoconfigure.condition.SpringBootCondition;
import org.springframework.boot.context.properties.source.ConfigurationPropertyName;
import org.springframework.boot.context.properties.source.ConfigurationPropertySource;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.ConfigurationPropertyState;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.core.type.AnnotatedTypeMetadata;

/**
 * Matches when any property under {@code parley.mcp.servers} is set, whether or not it binds: a server
 * configured wrongly must fail the start-up, not leave the application quietly without its tools.
 */
public final class McpServersConfigured extends SpringBootCondition {
    private static final ConfigurationPropertyName SERVERS = ConfigurationPropertyName.of("parley.mcp.servers");

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(context.getEnvironment())) {
            if (source.containsDescendantOf(SERVERS) == ConfigurationPropertyState.PRESENT
                    || source.getConfigurationProperty(SERVERS) != null) {
                return ConditionOutcome.match("parley.mcp.servers is set");
            }
        }
        return ConditionOutcome.noMatch("parley.mcp.servers is not set");
    }
}
