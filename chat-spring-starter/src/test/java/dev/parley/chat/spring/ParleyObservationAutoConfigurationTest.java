package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunContextPropagator;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.observation.ParleyObservations;
import dev.parley.chat.observation.RunObservations;
import dev.parley.chat.testing.Await;
import dev.parley.simulator.BridgeSimulator;
import dev.parley.simulator.SimulatorConfig;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Runs are traced when chat-observation is present and the application has an ObservationRegistry. */
class ParleyObservationAutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
            AutoConfigurations.of(ParleyObservationAutoConfiguration.class, ParleyHermesAutoConfiguration.class,
                    ParleyAutoConfiguration.class));

    /** A registry that records every observation it stops. */
    private static ObservationRegistry recording(List<Observation.Context> stopped) {
        ObservationRegistry registry = ObservationRegistry.create();
        registry.observationConfig().observationHandler(new ObservationHandler<>() {
            @Override
            public void onStop(Observation.Context context) {
                stopped.add(context);
            }

            @Override
            public boolean supportsContext(Observation.Context context) {
                return true;
            }
        });
        return registry;
    }

    @Test
    void withARegistryARunAndTheBridgeCallUnderItAreObserved() throws Exception {
        List<Observation.Context> stopped = new CopyOnWriteArrayList<>();
        try (BridgeSimulator bridge = BridgeSimulator.start(SimulatorConfig.builder().port(0).build())) {
            runner.withBean(ObservationRegistry.class, () -> recording(stopped))
                    .withPropertyValues("parley.hermes.base-url=" + bridge.baseUrl())
                    .run(context -> {
                        assertThat(context).hasSingleBean(RunObservations.class).hasSingleBean(RunContextPropagator.class);
                        assertThat(context.getBean(HermesRuntimeAdapter.class).config().httpClient()).isNotNull();
                        ChatEngine engine = context.getBean(ChatEngine.class);
                        String thread = engine.createThread("u", NewThread.empty()).id();
                        engine.startRun("u", thread, StartRun.of("hello bridge"));
                        Await.until(() -> stopped.stream().anyMatch(c -> ParleyObservations.RUN.equals(c.getName())),
                                x -> x, "the run's observation");
                    });
        }
        Observation.Context run = stopped.stream().filter(c -> ParleyObservations.RUN.equals(c.getName()))
                .findFirst().orElseThrow();
        assertThat(run.getLowCardinalityKeyValue(ParleyObservations.RUNTIME).getValue()).isEqualTo("hermes");
        assertThat(run.getLowCardinalityKeyValue(ParleyObservations.STATUS).getValue()).isEqualTo("SUCCEEDED");
        assertThat(stopped).filteredOn(c -> "okhttp.requests".equals(c.getName()))
                .anySatisfy(call -> assertThat(call.getParentObservation()).isNotNull()
                        .satisfies(parent -> assertThat(parent.getContextView().getName()).isEqualTo(ParleyObservations.RUN)));
    }

    @Test
    void withoutARegistryOrWhenTurnedOffNothingIsObserved() {
        runner.withPropertyValues("parley.hermes.base-url=http://localhost:1").run(context -> {
            assertThat(context).doesNotHaveBean(RunObservations.class);
            assertThat(context.getBean(HermesRuntimeAdapter.class).config().httpClient()).isNull();
        });
        runner.withBean(ObservationRegistry.class, ObservationRegistry::create)
                .withPropertyValues("parley.hermes.base-url=http://localhost:1", "parley.observation.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(RunObservations.class));
    }

    @Test
    void withoutTheModuleTheStarterWorksAsBefore() {
        runner.withClassLoader(new FilteredClassLoader(RunObservations.class))
                .withBean(ObservationRegistry.class, ObservationRegistry::create)
                .withPropertyValues("parley.hermes.base-url=http://localhost:1")
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(RunContextPropagator.class);
                    assertThat(context).hasSingleBean(ChatEngine.class);
                });
    }

    @Test
    void withMicrometerTracingRunsKeepTheTraceTheyStartedInAndWithoutItTheStarterWorksAsBefore() {
        runner.withBean(ObservationRegistry.class, ObservationRegistry::create)
                .withBean(io.micrometer.tracing.Tracer.class, () -> io.micrometer.tracing.Tracer.NOOP)
                .withBean(io.micrometer.tracing.propagation.Propagator.class,
                        () -> io.micrometer.tracing.propagation.Propagator.NOOP)
                .withPropertyValues("parley.hermes.base-url=http://localhost:1")
                .run(context -> {
                    assertThat(context).hasSingleBean(dev.parley.chat.spring.internal.RunStartHeaders.class);
                    assertThat(context.getBean(dev.parley.chat.spring.internal.RunStartHeaders.class).headers().get())
                            .as("no current span: nothing to keep").isEmpty();
                });
        runner.withClassLoader(new FilteredClassLoader(io.micrometer.tracing.Tracer.class))
                .withBean(ObservationRegistry.class, ObservationRegistry::create)
                .withPropertyValues("parley.hermes.base-url=http://localhost:1")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(RunObservations.class)
                            .doesNotHaveBean(dev.parley.chat.spring.internal.RunStartHeaders.class);
                });
    }
}
