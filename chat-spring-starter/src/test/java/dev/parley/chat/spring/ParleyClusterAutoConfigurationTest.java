package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.cluster.RunCoordinator;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.jdbi.PostgresRunCoordinator;
import dev.parley.chat.testing.InProcessCoordinators;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/** Clustering is switched on by property, needs PostgreSQL, and a host coordinator wins. */
class ParleyClusterAutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    ParleyJdbiStoreAutoConfiguration.class, ParleyClusterAutoConfiguration.class,
                    ParleyAutoConfiguration.class))
            .withBean(RuntimeAdapter.class, () -> ScriptedRuntime.playing(Scripts.streamsUntilCancelled()));

    @Test
    void offByDefault(@TempDir Path dir) {
        runner.withPropertyValues("spring.datasource.url=jdbc:sqlite:" + dir.resolve("a.db"))
                .run(context -> assertThat(context).doesNotHaveBean(RunCoordinator.class));
    }

    @Test
    void aSqliteFileCannotBeShared(@TempDir Path dir) {
        runner.withPropertyValues("spring.datasource.url=jdbc:sqlite:" + dir.resolve("a.db"), "parley.cluster.enabled=true")
                .run(context -> {
                    assertThat(context).hasFailed();
                    assertThat(context.getStartupFailure()).rootCause().hasMessageContaining("needs PostgreSQL");
                });
    }

    @Test
    void theEngineUsesTheCoordinatorAndLeasesItsRuns(@TempDir Path dir) {
        try (InProcessCoordinators hub = new InProcessCoordinators()) {
            RunCoordinator coordinator = hub.join("host-1");
            runner.withPropertyValues("spring.datasource.url=jdbc:sqlite:" + dir.resolve("a.db"),
                    "parley.cluster.enabled=true", "parley.cluster.lease-timeout=45s")
                    .withBean(RunCoordinator.class, () -> coordinator)
                    .run(context -> {
                        assertThat(context).doesNotHaveBean(PostgresRunCoordinator.class);
                        ChatEngine engine = context.getBean(ChatEngine.class);
                        String thread = engine.createThread("u", NewThread.empty()).id();
                        String runId = engine.startRun("u", thread, StartRun.of("hi")).runId();
                        var lease = context.getBean(ChatStore.class).findLease(runId).orElseThrow();
                        assertThat(lease.instanceId()).isEqualTo("host-1");
                        assertThat(lease.until()).isAfter(java.time.Instant.now().plusSeconds(30));
                        engine.cancel("u", runId);
                    });
        }
    }
}
