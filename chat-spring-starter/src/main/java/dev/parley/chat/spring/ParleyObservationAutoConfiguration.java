package dev.parley.chat.spring;

import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.engine.EngineListener;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.RunContextPropagator;
import dev.parley.chat.observation.ObservationSettings;
import dev.parley.chat.observation.RunObservations;
import dev.parley.chat.observation.TraceHeaders;
import dev.parley.chat.runtime.RunThreads;
import dev.parley.chat.spring.internal.RunStartHeaders;
import dev.parley.chat.spring.internal.RunTracing;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.propagation.Propagator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiFunction;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import okhttp3.Interceptor;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

/**
 * Traces of runs through the application's {@link ObservationRegistry}, when {@code chat-observation} is on the
 * classpath and the application has a registry (Spring Boot makes one with its Micrometer observation or tracing
 * modules); {@code parley.observation.enabled=false} turns it off. The engine gets the listener and the context
 * propagator; Hermes and the agent loop get what carries the run's trace to their threads and HTTP calls.
 */
@AutoConfiguration(before = {ParleyHermesAutoConfiguration.class, ParleyModelAutoConfiguration.class,
    ParleyAutoConfiguration.class},
        afterName = "org.springframework.boot.micrometer.observation.autoconfigure.ObservationAutoConfiguration")
@ConditionalOnClass({RunObservations.class, ObservationRegistry.class})
@ConditionalOnBean(ObservationRegistry.class)
@ConditionalOnProperty(prefix = "parley.observation", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(ParleyObservationProperties.class)
public class ParleyObservationAutoConfiguration {
    private static final String OKHTTP_INTERCEPTOR = "io.micrometer.core.instrument.binder.okhttp3.OkHttpObservationInterceptor";

    @Bean
    @ConditionalOnMissingBean
    public RunObservations parleyRunObservations(ObservationRegistry registry, ParleyObservationProperties properties,
            ObjectProvider<HostAction> hostActions, Environment environment,
            ObjectProvider<RunStartHeaders> startHeaders) {
        String runtime = properties.getRuntime() != null ? properties.getRuntime()
                : environment.containsProperty("parley.hermes.base-url") ? "hermes" : "agent-loop";
        Set<String> names = hostActions.orderedStream().map(a -> a.spec().name()).collect(Collectors.toSet());
        ObservationSettings settings = ObservationSettings.of(runtime)
                .withIncludeContent(properties.isIncludeContent()).withHostActions(names);
        RunStartHeaders headers = startHeaders.getIfAvailable();
        return headers == null ? new RunObservations(registry, settings)
                : new RunObservations(registry, settings, headers.headers());
    }

    /**
     * With Micrometer Tracing present, runs keep the trace headers of the request that started them (when the
     * application has a {@code Tracer} and a {@code Propagator}, looked up at the first run), so that a run
     * followed again after a restart or by another instance continues that trace.
     */
    @Configuration(proxyBeanMethods = false)
    @ConditionalOnClass(name = "io.micrometer.tracing.Tracer")
    static class StartHeadersConfiguration {
        @Bean
        @ConditionalOnMissingBean
        RunStartHeaders parleyRunStartHeaders(ObjectProvider<Tracer> tracer, ObjectProvider<Propagator> propagator) {
            AtomicReference<Supplier<Map<String, String>>> found = new AtomicReference<>();
            return new RunStartHeaders(() -> {
                Supplier<Map<String, String>> headers = found.get();
                if (headers == null) {
                    Tracer t = tracer.getIfAvailable();
                    Propagator p = propagator.getIfAvailable();
                    headers = t == null || p == null ? Map::of : TraceHeaders.of(t, p);
                    found.set(headers);
                }
                return headers.get();
            });
        }
    }

    @Bean
    public EngineListener parleyObservationListener(RunObservations observations) {
        return observations.engineListener();
    }

    @Bean
    @ConditionalOnMissingBean
    public RunContextPropagator parleyRunContextPropagator(RunObservations observations) {
        return observations.contextPropagator();
    }

    @Bean
    @ConditionalOnMissingBean
    public RunTracing parleyRunTracing(RunObservations observations, ObservationRegistry registry,
            ParleyObservationProperties properties) {
        ThreadFactory agentThreads = RunThreads.factory("parley-agent");
        Interceptor http = ClassUtils.isPresent(OKHTTP_INTERCEPTOR, getClass().getClassLoader())
                ? OkHttpInterceptors.observing(registry) : null;
        BiFunction<ModelClient, String, ModelClient> models = properties.isModelCalls() ? observations::modelClient
                : (client, provider) -> client;
        return new RunTracing(observations.taskDecorator(), models,
                observations.executor(task -> agentThreads.newThread(task).start()), http);
    }

    /** Kept apart so that micrometer-core's class is loaded only when it is present. */
    private static final class OkHttpInterceptors {
        static Interceptor observing(ObservationRegistry registry) {
            return io.micrometer.core.instrument.binder.okhttp3.OkHttpObservationInterceptor
                    .builder(registry, "okhttp.requests").build();
        }
    }
}
