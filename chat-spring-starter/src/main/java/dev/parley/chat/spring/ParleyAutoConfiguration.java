package dev.parley.chat.spring;

import dev.parley.chat.cluster.RunCoordinator;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.SuggestionProvider;
import dev.parley.chat.engine.EngineListener;
import dev.parley.chat.engine.RunContextPropagator;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionSource;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.spring.internal.CompositeEngineListener;
import dev.parley.chat.spring.internal.ParleyMetrics;
import dev.parley.chat.spring.internal.SseStreams;
import dev.parley.chat.attachment.BlobStore;
import dev.parley.chat.outbox.OutboxRouting;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.InMemoryChatStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The {@link ChatEngine}, over the {@link RuntimeAdapter} and {@link ChatStore} beans. Without a store bean
 * the in-memory store is used (with a warning: nothing survives a restart); without a runtime bean there
 * is no engine (set {@code parley.hermes.base-url}, give the application a LangChain4j or Spring AI model bean, or
 * define a {@link RuntimeAdapter}). Every bean backs
 * off when the host defines its own. {@link EngineListener}, {@link HostAction} and {@link HostActionSource}
 * beans (such as the MCP tools of {@code parley.mcp.servers}) are picked up,
 * a {@link RunCoordinator} bean makes the engine one of several instances on one store, and an
 * {@link OutboxRouting} bean (the webhooks of {@code parley.webhooks}) has it write outbox entries.
 */
@AutoConfiguration(afterName = {
    "dev.parley.chat.spring.ParleyHermesAutoConfiguration",
    "dev.parley.chat.spring.ParleyJdbiStoreAutoConfiguration",
    "dev.parley.chat.spring.ParleyClusterAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration",
    "org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration"
})
@EnableConfigurationProperties({ParleyProperties.class, ParleyAttachmentProperties.class, ParleySuggestionProperties.class})
public class ParleyAutoConfiguration {
    private static final Logger log = LoggerFactory.getLogger(ParleyAutoConfiguration.class);

    @Bean
    @ConditionalOnMissingBean
    public ChatStore parleyChatStore() {
        log.warn("Parley uses the in-memory store: conversations are lost when the process stops. "
                + "Give the application a DataSource (and chat-store-jdbi) or a ChatStore bean to keep them.");
        return new InMemoryChatStore();
    }

    @Bean
    @ConditionalOnMissingBean
    @ConditionalOnBean(RuntimeAdapter.class)
    public ChatEngine chatEngine(RuntimeAdapter runtime, ChatStore store, ParleyProperties properties,
            ObjectProvider<EngineListener> listeners, ObjectProvider<HostAction> hostActions,
            ObjectProvider<HostActionSource> hostActionSources, ObjectProvider<RunCoordinator> coordinator,
            ParleyAttachmentProperties attachments, ObjectProvider<BlobStore> blobStore,
            ObjectProvider<RunContextPropagator> contextPropagator, ObjectProvider<OutboxRouting> outbox,
            ParleySuggestionProperties suggestions, ObjectProvider<SuggestionProvider> suggestionProvider) {
        ChatEngine.Builder builder = ChatEngine.builder()
                .runtime(runtime)
                .store(store)
                .limits(properties.getEngine().toLimits())
                .doubleTexting(properties.getEngine().getDoubleTexting())
                .deliveryThreads(properties.getEngine().getDeliveryThreads())
                .listener(new CompositeEngineListener(listeners.orderedStream().collect(Collectors.toList())));
        builder.attachmentLimits(attachments.toLimits());
        blobStore.ifUnique(builder::blobStore);
        contextPropagator.ifUnique(builder::contextPropagator);
        outbox.ifUnique(builder::outbox);
        hostActions.orderedStream().forEach(builder::hostAction);
        hostActionSources.orderedStream().forEach(builder::hostActions);
        builder.maxSuggestions(suggestions.getMax()).suggestionTimeout(suggestions.getTimeout());
        suggestionProvider.ifUnique(builder::suggestions);
        if (properties.getEngine().getEventRetention() != null) {
            builder.eventRetention(properties.getEngine().getEventRetention());
        }
        coordinator.ifAvailable(value -> builder.coordinator(value)
                .leaseTimeout(properties.getCluster().getLeaseTimeout())
                .controlTimeout(properties.getCluster().getControlTimeout()));
        return builder.build();
    }

    @Bean
    @ConditionalOnMissingBean(RuntimeAdapter.class)
    public SmartInitializingSingleton parleyMissingRuntimeWarning() {
        return () -> log.warn("Parley is on the classpath but has no runtime, so no chat engine was created: "
                + "set parley.hermes.base-url, give the application a LangChain4j StreamingChatModel or Spring AI "
                + "ChatModel bean (with chat-adapter-langchain4j or chat-adapter-spring-ai), or define a RuntimeAdapter bean.");
    }

    /** Micrometer meters, when the application has a meter registry. */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(MeterRegistry.class)
    @ConditionalOnBean(MeterRegistry.class)
    static class Metrics {
        @Bean
        @ConditionalOnMissingBean
        ParleyMetrics parleyMetrics(MeterRegistry registry, ObjectProvider<SseStreams> sseStreams) {
            return new ParleyMetrics(registry, () -> {
                SseStreams streams = sseStreams.getIfAvailable();
                return streams == null ? 0 : streams.openStreams();
            });
        }
    }
}
