package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.EngineListener;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionSource;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.spring.internal.ChatController;
import dev.parley.chat.spring.internal.MessagesController;
import dev.parley.chat.spring.internal.RunInputsController;
import dev.parley.chat.spring.internal.ParleyMetrics;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.diagnostics.FailureAnalyzer;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.core.io.support.SpringFactoriesLoader;
import org.springframework.mock.web.MockHttpServletRequest;
import reactor.core.publisher.Flux;

/** Every condition of the auto-configuration, with the host's beans winning. */
class ParleyAutoConfigurationTest {
    private static final AutoConfigurations PARLEY = AutoConfigurations.of(ParleyAutoConfiguration.class,
            ParleyWebAutoConfiguration.class, ParleyReactiveAutoConfiguration.class);

    private final WebApplicationContextRunner web = new WebApplicationContextRunner()
            .withConfiguration(PARLEY)
            .withPropertyValues("parley.owner.mode=HEADER");

    private static RuntimeAdapter runtime() {
        return ScriptedRuntime.playing(Scripts.instant("hi"));
    }

    @Test
    void withoutARuntimeThereIsNoEngineAndNoEndpoint() {
        web.run(context -> {
            assertThat(context).hasNotFailed();
            assertThat(context).doesNotHaveBean(ChatEngine.class);
            assertThat(context).doesNotHaveBean(ChatController.class);
            assertThat(context).doesNotHaveBean(RunInputsController.class);
            assertThat(context).hasBean("parleyMissingRuntimeWarning");
        });
    }

    @Test
    void aRuntimeBeanGivesAnEngineOverTheInMemoryStoreAndTheEndpoints() {
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime).run(context -> {
            assertThat(context).hasSingleBean(ChatEngine.class);
            assertThat(context.getBean(ChatStore.class)).isInstanceOf(InMemoryChatStore.class);
            assertThat(context).hasSingleBean(ChatController.class);
            assertThat(context).hasSingleBean(RunInputsController.class);
            assertThat(context).hasSingleBean(MessagesController.class);
            assertThat(context).hasSingleBean(ParleySse.class);
            assertThat(context).hasSingleBean(ParleyFlux.class);
            assertThat(context).doesNotHaveBean("parleyMissingRuntimeWarning");
        });
    }

    @Test
    void theEventRetentionIsOffByDefaultAndGoesToTheEngineBuilder() {
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime).run(context ->
                assertThat(context.getBean(ParleyProperties.class).getEngine().getEventRetention()).isNull());
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .withPropertyValues("parley.engine.event-retention=P30D").run(context -> {
                    assertThat(context).hasSingleBean(ChatEngine.class);
                    assertThat(context.getBean(ParleyProperties.class).getEngine().getEventRetention())
                            .isEqualTo(java.time.Duration.ofDays(30));
                });
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .withPropertyValues("parley.engine.event-retention=0s").run(context ->
                        assertThat(context).hasFailed().getFailure().rootCause()
                                .hasMessageContaining("eventRetention must be positive"));
    }

    @Test
    void theHostsBeansWin() {
        InMemoryChatStore hostStore = new InMemoryChatStore();
        OwnerResolver hostOwners = request -> "always-bob";
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .withBean(ChatStore.class, () -> hostStore)
                .withBean(OwnerResolver.class, () -> hostOwners)
                .run(context -> {
                    assertThat(context.getBean(ChatStore.class)).isSameAs(hostStore);
                    assertThat(context.getBean(OwnerResolver.class)).isSameAs(hostOwners);
                });
        ChatEngine hostEngine = ChatEngine.builder().runtime(runtime()).store(new InMemoryChatStore()).build();
        try {
            web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                    .withBean(ChatEngine.class, () -> hostEngine)
                    .run(context -> assertThat(context.getBean(ChatEngine.class)).isSameAs(hostEngine));
        } finally {
            hostEngine.close();
        }
    }

    @Test
    void theEndpointsCanBeSwitchedOffLeavingTheHelpers() {
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .withPropertyValues("parley.web.enabled=false")
                .run(context -> {
                    assertThat(context).doesNotHaveBean(ChatController.class);
                    assertThat(context).doesNotHaveBean(RunInputsController.class);
                    assertThat(context).hasSingleBean(ParleySse.class);
                    assertThat(context).hasSingleBean(ChatEngine.class);
                });
    }

    @Test
    void outsideAWebApplicationThereAreNoEndpoints() {
        new ApplicationContextRunner().withConfiguration(PARLEY)
                .withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .run(context -> {
                    assertThat(context).hasSingleBean(ChatEngine.class);
                    assertThat(context).doesNotHaveBean(ChatController.class);
                    assertThat(context).doesNotHaveBean(RunInputsController.class);
                    assertThat(context).doesNotHaveBean(OwnerResolver.class);
                });
    }

    @Test
    void withoutReactorThereIsNoFluxHelper() {
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .withClassLoader(new FilteredClassLoader(Flux.class))
                .run(context -> {
                    assertThat(context).hasSingleBean(ChatEngine.class);
                    assertThat(context).doesNotHaveBean(ParleyFlux.class);
                });
    }

    @Test
    void theOwnerComesFromTheChosenPlace() {
        MockHttpServletRequest request = new MockHttpServletRequest();
        request.addHeader("X-Team-User", "carol");
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .withPropertyValues("parley.owner.mode=HEADER", "parley.owner.header=X-Team-User")
                .run(context -> assertThat(context.getBean(OwnerResolver.class).ownerOf(request)).isEqualTo("carol"));
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .withPropertyValues("parley.owner.mode=FIXED", "parley.owner.fixed=demo")
                .run(context -> assertThat(context.getBean(OwnerResolver.class).ownerOf(request)).isEqualTo("demo"));
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .withPropertyValues("parley.owner.mode=FIXED")
                .run(context -> assertThat(context).hasFailed());
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .withPropertyValues("parley.owner.mode=AUTO", "parley.owner.fixed=demo")
                .withClassLoader(new FilteredClassLoader("org.springframework.security"))
                .run(context -> assertThat(context.getBean(OwnerResolver.class).ownerOf(request)).isEqualTo("demo"));
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .withPropertyValues("parley.owner.mode=AUTO")
                .run(context -> {
                    org.springframework.security.core.context.SecurityContextHolder.getContext().setAuthentication(
                            org.springframework.security.authentication.UsernamePasswordAuthenticationToken
                                    .authenticated("dave", "n/a", List.of()));
                    try {
                        assertThat(context.getBean(OwnerResolver.class).ownerOf(request)).isEqualTo("dave");
                    } finally {
                        org.springframework.security.core.context.SecurityContextHolder.clearContext();
                    }
                    assertThat(context.getBean(OwnerResolver.class).ownerOf(request)).isNull();
                });
    }

    @Test
    void withoutSpringSecurityOrAnExplicitModeTheOwnerHeaderIsNotTrustedAndTheStartFails() {
        MockHttpServletRequest spoofed = new MockHttpServletRequest();
        spoofed.addHeader("X-Parley-Owner", "victim");
        WebApplicationContextRunner noSecurity = new WebApplicationContextRunner().withConfiguration(PARLEY)
                .withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .withClassLoader(new FilteredClassLoader("org.springframework.security"));
        for (String[] properties : List.of(new String[0], new String[] {"parley.owner.mode=AUTO"},
                new String[] {"parley.owner.fixed= "})) {
            noSecurity.withPropertyValues(properties).run(context -> {
                assertThat(context).hasFailed();
                assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("parley.owner.mode=HEADER")
                        .hasMessageContaining("parley.owner.fixed")
                        .hasMessageContaining("Spring Security");
            });
        }
        noSecurity.withPropertyValues("parley.owner.mode=HEADER")
                .run(context -> assertThat(context.getBean(OwnerResolver.class).ownerOf(spoofed)).isEqualTo("victim"));
        noSecurity.withPropertyValues("parley.owner.fixed=demo")
                .run(context -> assertThat(context.getBean(OwnerResolver.class).ownerOf(spoofed)).isEqualTo("demo"));
        noSecurity.withPropertyValues("parley.owner.mode=FIXED", "parley.owner.fixed=demo")
                .run(context -> assertThat(context.getBean(OwnerResolver.class).ownerOf(spoofed)).isEqualTo("demo"));
        noSecurity.withBean(OwnerResolver.class, () -> request -> "host-decides")
                .run(context -> assertThat(context.getBean(OwnerResolver.class).ownerOf(spoofed)).isEqualTo("host-decides"));
        new WebApplicationContextRunner().withConfiguration(PARLEY)
                .withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .run(context -> assertThat(context.getBean(OwnerResolver.class).ownerOf(spoofed))
                        .as("Spring Security present: its principal, and there is none").isNull());
    }

    @Test
    void theRefusedStartExplainsWhatToSet() {
        new WebApplicationContextRunner().withConfiguration(PARLEY)
                .withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .withClassLoader(new FilteredClassLoader("org.springframework.security"))
                .run(context -> {
                    FailureAnalysis analysis = SpringFactoriesLoader.forDefaultResourceLocation()
                            .load(FailureAnalyzer.class, SpringFactoriesLoader.FailureHandler.handleMessage((m, e) -> { }))
                            .stream()
                            .map(analyzer -> analyzer.analyze(context.getStartupFailure()))
                            .filter(Objects::nonNull)
                            .findFirst().orElseThrow(() -> new AssertionError("no failure analyzer explains the failure"));
                    assertThat(analysis.getDescription()).contains("X-Parley-Owner").contains("anyone");
                    assertThat(analysis.getAction()).contains("parley.owner.mode=HEADER")
                            .contains("parley.owner.fixed").contains("Spring Security");
                });
    }

    @Test
    void aHostActionSourceBeanDecidesActionsPerRun() {
        HostAction mine = new HostAction(new HostToolSpec("mine", "only alice's", "{}"), call -> "yours");
        HostActionSource byOwner = scope -> scope.ownerId().equals("alice") ? List.of(mine) : List.of();
        ScriptedRuntime scripted = ScriptedRuntime.playing(Scripts.callsHostAction("mine", "{}"));
        web.withBean(RuntimeAdapter.class, () -> scripted)
                .withBean(HostActionSource.class, () -> byOwner)
                .run(context -> {
                    ChatEngine engine = context.getBean(ChatEngine.class);
                    String thread = engine.createThread("alice", NewThread.empty()).id();
                    engine.startRun("alice", thread, StartRun.of("go"));
                    long deadline = System.currentTimeMillis() + 10_000;
                    while (scripted.toolResults().isEmpty() && System.currentTimeMillis() < deadline) {
                        Thread.sleep(10);
                    }
                    assertThat(scripted.requests().get(0).hostTools()).extracting(HostToolSpec::name).containsExactly("mine");
                    assertThat(scripted.toolResults()).extracting(r -> r.result()).containsExactly("yours");
                });
    }

    @Test
    void engineSettingsHostActionsAndListenersAreApplied() {
        List<String> finished = new CopyOnWriteArrayList<>();
        EngineListener listener = new EngineListener() {
            @Override
            public void runFinished(Run run) {
                finished.add(run.id());
            }
        };
        java.util.concurrent.CountDownLatch secondStarted = new java.util.concurrent.CountDownLatch(1);
        HostAction action = new HostAction(new HostToolSpec("lookup", "finds", "{}"), call -> {
            secondStarted.await(10, java.util.concurrent.TimeUnit.SECONDS);
            return "found";
        });
        ScriptedRuntime scripted = ScriptedRuntime.playing(Scripts.callsHostAction("lookup", "{}"));
        web.withBean(RuntimeAdapter.class, () -> scripted)
                .withBean(EngineListener.class, () -> listener)
                .withBean(HostAction.class, () -> action)
                .withPropertyValues("parley.engine.double-texting=ENQUEUE", "parley.engine.max-message-length=5")
                .run(context -> {
                    ChatEngine engine = context.getBean(ChatEngine.class);
                    String thread = engine.createThread("u", NewThread.empty()).id();
                    org.assertj.core.api.Assertions.assertThatThrownBy(() -> engine.startRun("u", thread, StartRun.of("too long")))
                            .hasMessageContaining("longer than 5");
                    String first = engine.startRun("u", thread, StartRun.of("one")).runId();
                    assertThat(engine.startRun("u", thread, StartRun.of("two")).status()).isEqualTo(RunStatus.QUEUED);
                    secondStarted.countDown();
                    long deadline = System.currentTimeMillis() + 10_000;
                    while (finished.size() < 2 && System.currentTimeMillis() < deadline) {
                        Thread.sleep(10);
                    }
                    assertThat(finished).hasSize(2).contains(first);
                    assertThat(scripted.toolResults()).extracting(r -> r.result()).containsOnly("found");
                });
    }

    @Test
    void aRunsWorkCarriesItsThreadAndRunInTheLoggingContext() {
        java.util.concurrent.atomic.AtomicReference<String> seen = new java.util.concurrent.atomic.AtomicReference<>();
        HostAction whoami = new HostAction(new HostToolSpec("whoami", "", "{}"), call -> {
            seen.set(org.slf4j.MDC.get("parley.threadId") + "/" + org.slf4j.MDC.get("parley.runId"));
            return "ok";
        });
        web.withBean(RuntimeAdapter.class, () -> ScriptedRuntime.playing(Scripts.callsHostAction("whoami", "{}")))
                .withBean(HostAction.class, () -> whoami)
                .run(context -> {
                    ChatEngine engine = context.getBean(ChatEngine.class);
                    String thread = engine.createThread("u", NewThread.empty()).id();
                    String runId = engine.startRun("u", thread, StartRun.of("who?")).runId();
                    long deadline = System.currentTimeMillis() + 10_000;
                    while (seen.get() == null && System.currentTimeMillis() < deadline) {
                        Thread.sleep(10);
                    }
                    assertThat(seen.get()).isEqualTo(thread + "/" + runId);
                });
    }

    @Test
    void metricsAreRecordedWhenARegistryExists() {
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .withBean(MeterRegistry.class, SimpleMeterRegistry::new)
                .run(context -> {
                    assertThat(context).hasSingleBean(ParleyMetrics.class);
                    ChatEngine engine = context.getBean(ChatEngine.class);
                    MeterRegistry registry = context.getBean(MeterRegistry.class);
                    String thread = engine.createThread("u", NewThread.empty()).id();
                    String runId = engine.startRun("u", thread, StartRun.of("hi")).runId();
                    long deadline = System.currentTimeMillis() + 10_000;
                    while (engine.state("u", runId).run().status() != RunStatus.SUCCEEDED
                            && System.currentTimeMillis() < deadline) {
                        Thread.sleep(10);
                    }
                    assertThat(registry.get("parley.runs.finished").tag("outcome", "SUCCEEDED").counter().count()).isEqualTo(1);
                    assertThat(registry.get("parley.events.relayed").counter().count()).isGreaterThanOrEqualTo(4);
                    assertThat(registry.get("parley.runs.active").gauge().value()).isZero();
                    assertThat(registry.get("parley.sse.streams.open").gauge().value()).isZero();
                    assertThat(registry.get("parley.subscribers.open").gauge().value()).isZero();
                });
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .run(context -> assertThat(context).doesNotHaveBean(ParleyMetrics.class));
    }

    @Test
    void badStreamSettingsFailTheStartWithTheirName() {
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .withPropertyValues("parley.web.stream-write-timeout=0s")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("stream-write-timeout must be positive"));
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .withPropertyValues("parley.web.stream-buffer-size=100B")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("stream buffer must be at least 1 KiB"));
        web.withBean(RuntimeAdapter.class, ParleyAutoConfigurationTest::runtime)
                .withPropertyValues("parley.web.stream-buffer-size=1MB", "parley.web.stream-write-timeout=5s")
                .run(context -> assertThat(context).hasNotFailed());
    }

    @Test
    void thePropertiesDefaultsAreTheEngineDefaults() {
        assertThat(new ParleyProperties().getEngine().toLimits()).isEqualTo(dev.parley.chat.engine.EngineLimits.defaults());
    }
}
