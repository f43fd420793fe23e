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
 * Matches when any property under {@code parley.webhooks} is set, whether or not it binds: an endpoint
 * configured wrongly must fail the start-up, not leave the application quietly without its webhooks.
 */
public final class WebhooksConfigured extends SpringBootCondition {
    private static final ConfigurationPropertyName WEBHOOKS = ConfigurationPropertyName.of("parley.webhooks");

    @Override
    public ConditionOutcome getMatchOutcome(ConditionContext context, AnnotatedTypeMetadata metadata) {
        for (ConfigurationPropertySource source : ConfigurationPropertySources.get(context.getEnvironment())) {
            if (source.containsDescendantOf(WEBHOOKS) == ConfigurationPropertyState.PRESENT
                    || source.getConfigurationProperty(WEBHOOKS) != null) {
                return ConditionOutcome.match("parley.webhooks is set");
            }
        }
        return ConditionOutcome.noMatch("parley.webhooks is not set");
    }
}
