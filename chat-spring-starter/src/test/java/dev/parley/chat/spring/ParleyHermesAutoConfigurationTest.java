package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.hermes.FeatureSetting;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.hermes.HermesTransport;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.ModelOption;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import dev.parley.simulator.BridgeSimulator;
import dev.parley.simulator.SimulatorConfig;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** The Hermes runtime is configured from properties, against a real Bridge (the simulator). */
class ParleyHermesAutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
            AutoConfigurations.of(ParleyHermesAutoConfiguration.class, ParleyAutoConfiguration.class));

    @Test
    void withoutABaseUrlThereIsNoHermesRuntime() {
        runner.run(context -> {
            assertThat(context).doesNotHaveBean(RuntimeAdapter.class);
            assertThat(context).doesNotHaveBean(ChatEngine.class);
        });
    }

    @Test
    void aBaseUrlGivesAnEngineDrivingTheBridge(@TempDir Path skills) throws Exception {
        Files.createDirectories(skills.resolve("travel"));
        Files.writeString(skills.resolve("travel/SKILL.md"), "---\nname: Travel planner\ndescription: Plans trips\n---\nYou plan trips.");
        try (BridgeSimulator bridge = BridgeSimulator.start(SimulatorConfig.builder().port(0).build())) {
            runner.withPropertyValues(
                    "parley.hermes.base-url=" + bridge.baseUrl(),
                    "parley.hermes.idle-timeout=30s",
                    "parley.hermes.skills-dir=" + skills,
                    "parley.hermes.models[0].id=fast",
                    "parley.hermes.models[0].name=gpt-fast",
                    "parley.hermes.models[0].provider=openrouter",
                    "parley.hermes.models[0].api-key=sk-secret-123")
                    .run(context -> {
                        HermesRuntimeAdapter adapter = context.getBean(HermesRuntimeAdapter.class);
                        assertThat(adapter.config().transport()).isEqualTo(HermesTransport.BRIDGE);
                        assertThat(adapter.config().idleTimeout()).hasSeconds(30);
                        assertThat(adapter.toString()).doesNotContain("sk-secret-123");
                        ChatEngine engine = context.getBean(ChatEngine.class);
                        assertThat(engine.models()).containsExactly(new ModelOption("fast", "gpt-fast", "openrouter"));
                        assertThat(engine.skills()).singleElement().satisfies(s -> assertThat(s.id()).isEqualTo("travel"));

                        String thread = engine.createThread("u", new NewThread(null, "fast", "travel")).id();
                        var ticket = engine.startRun("u", thread, StartRun.of("hello bridge"));
                        long deadline = System.currentTimeMillis() + 20_000;
                        while (engine.state("u", ticket.runId()).run().status() != RunStatus.SUCCEEDED
                                && System.currentTimeMillis() < deadline) {
                            Thread.sleep(20);
                        }
                        AssistantMessage answer = (AssistantMessage) context.getBean(ChatStore.class)
                                .findMessage(ticket.assistantMessageId()).orElseThrow();
                        assertThat(answer.status()).isEqualTo(dev.parley.chat.model.MessageStatus.COMPLETED);
                        assertThat(answer.text()).isNotBlank();
                        var seen = bridge.request(ticket.runId()).orElseThrow();
                        assertThat(seen.systemPrompt()).contains("You plan trips.");
                        assertThat(seen.modelApiKeyPresent()).isTrue();
                    });
        }
    }

    @Test
    void theApiServerTransportIsChosenByProperty() {
        runner.withPropertyValues("parley.hermes.base-url=http://localhost:1", "parley.hermes.transport=api-server")
                .run(context -> assertThat(context.getBean(HermesRuntimeAdapter.class).config().transport())
                        .isEqualTo(HermesTransport.API_SERVER));
        runner.withPropertyValues("parley.hermes.base-url=http://localhost:1", "parley.hermes.transport=carrier-pigeon")
                .run(context -> assertThat(context).hasFailed());
    }

    @Test
    void theApiServersBehavioursCanBePinned() {
        runner.withPropertyValues("parley.hermes.base-url=http://localhost:1", "parley.hermes.transport=API_SERVER",
                        "parley.hermes.api-server.session-history=off", "parley.hermes.api-server.clarify=ON",
                        "parley.hermes.api-server.approval-timeout=5m", "parley.hermes.api-server.info-ttl=30s")
                .run(context -> {
                    HermesConfig config = context.getBean(HermesRuntimeAdapter.class).config();
                    assertThat(config.apiServerSessionHistory()).isEqualTo(FeatureSetting.OFF);
                    assertThat(config.apiServerClarify()).isEqualTo(FeatureSetting.ON);
                    assertThat(config.apiServerIdempotentStart()).isEqualTo(FeatureSetting.DETECT);
                    assertThat(config.apiServerApprovalTimeout()).isEqualTo(Duration.ofMinutes(5));
                    assertThat(config.apiServerInfoTtl()).isEqualTo(Duration.ofSeconds(30));
                });
        runner.withPropertyValues("parley.hermes.base-url=http://localhost:1",
                        "parley.hermes.api-server.clarify=sometimes")
                .run(context -> assertThat(context).getFailure().rootCause()
                        .hasMessageContaining("parley.hermes.api-server.clarify must be DETECT, ON or OFF"));
    }

    @Test
    void theFilesDeclaredOnABridgeComeFromAProperty() {
        runner.withPropertyValues("parley.hermes.base-url=http://localhost:1")
                .run(context -> assertThat(context.getBean(HermesRuntimeAdapter.class).attachmentSupport())
                        .isEqualTo(HermesConfig.BRIDGE_ATTACHMENTS));
        runner.withPropertyValues("parley.hermes.base-url=http://localhost:1", "parley.hermes.bridge-attachment-types=")
                .run(context -> assertThat(context.getBean(HermesRuntimeAdapter.class).attachmentSupport())
                        .isEqualTo(AttachmentSupport.NONE));
        runner.withPropertyValues("parley.hermes.base-url=http://localhost:1",
                        "parley.hermes.bridge-attachment-types=image/*, Text/Plain")
                .run(context -> {
                    AttachmentSupport files = context.getBean(HermesRuntimeAdapter.class).attachmentSupport();
                    assertThat(files.mediaTypes()).containsExactlyInAnyOrder("image/*", "text/plain");
                    assertThat(files.accepts("application/pdf")).isFalse();
                    assertThat(files.limitText()).contains("parley.hermes.bridge-attachment-types");
                });
    }

    @Test
    void aHostRuntimeWinsAndTheModuleCanBeLeftOut() {
        RuntimeAdapter mine = ScriptedRuntime.playing(Scripts.instant("x"));
        runner.withPropertyValues("parley.hermes.base-url=http://localhost:1")
                .withBean(RuntimeAdapter.class, () -> mine)
                .run(context -> {
                    assertThat(context).doesNotHaveBean(HermesRuntimeAdapter.class);
                    assertThat(context.getBean(RuntimeAdapter.class)).isSameAs(mine);
                });
        runner.withPropertyValues("parley.hermes.base-url=http://localhost:1")
                .withClassLoader(new FilteredClassLoader(HermesRuntimeAdapter.class))
                .run(context -> assertThat(context).doesNotHaveBean(RuntimeAdapter.class));
    }
}
