package dev.parley.example;

import dev.parley.chat.engine.SuggestionProvider;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.hermes.HermesModel;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.hermes.ModelResolver;
import dev.parley.chat.model.Suggestions;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.simulator.BridgeSimulator;
import dev.parley.simulator.SimulatorConfig;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.autoconfigure.condition.ConditionalOnExpression;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * When no real Hermes is configured ({@code parley.hermes.base-url} empty) and no real model is asked for
 * ({@code parley.example.runtime} is not {@code openai}), the app starts the Bridge simulator on a free loopback port
 * and drives it through the real Hermes adapter, over real HTTP.
 */
@Configuration(proxyBeanMethods = false)
@ConditionalOnExpression("'${parley.hermes.base-url:}'.isBlank() and '${parley.example.runtime:simulator}' != 'openai'")
class SimulatorRuntimeConfiguration {

    @Bean(destroyMethod = "close")
    BridgeSimulator bridgeSimulator(@Value("${example.simulator.events-per-second:60}") double eventsPerSecond)
            throws IOException {
        return BridgeSimulator.start(SimulatorConfig.builder()
                .port(0)
                .eventsPerSecond(eventsPerSecond)
                .heartbeatInterval(Duration.ofSeconds(15))
                .build());
    }

    /**
     * Follow-up suggestions for answers to messages with the word "suggest" (only those, so that the other
     * scenarios look as before): two prompts, the first of which runs the tools scenario. A real application
     * registers its own {@link SuggestionProvider} bean, or asks its model ({@code parley.suggestions.model.enabled}).
     */
    @Bean
    SuggestionProvider exampleSuggestions() {
        return request -> request.question().toLowerCase(Locale.ROOT).contains("suggest")
                ? Suggestions.of(List.of("Use the tools to plan a trip", "Tell me a joke"))
                : null;
    }

    @Bean(destroyMethod = "close")
    RuntimeAdapter simulatedHermes(BridgeSimulator simulator) {
        return new HermesRuntimeAdapter(HermesConfig.builder()
                .baseUrl(simulator.baseUrl())
                .modelResolver(ModelResolver.of(List.of(
                        new HermesModel("hermes-4-405b", "Hermes 4 405B (simulated)", "nous", null, null),
                        new HermesModel("hermes-4-70b", "Hermes 4 70B (simulated)", "nous", null, null))))
                .build());
    }
}
