package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import dev.parley.chat.store.jdbi.ParleyMigrations;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.nio.file.Path;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.sqlite.SQLiteDataSource;

/** The JDBI store comes with the host's DataSource; the in-memory store otherwise. */
class ParleyJdbiStoreAutoConfigurationTest {
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
                    ParleyJdbiStoreAutoConfiguration.class, ParleyAutoConfiguration.class))
            .withBean(RuntimeAdapter.class, () -> ScriptedRuntime.playing(Scripts.instant("x")));

    @Test
    void aDataSourceGivesTheDurableStoreWithItsMigrations(@TempDir Path dir) {
        runner.withPropertyValues("spring.datasource.url=jdbc:sqlite:" + dir.resolve("chat.db")).run(context -> {
            assertThat(context.getBean(ChatStore.class)).isInstanceOf(JdbiChatStore.class);
            String id = context.getBean(ChatEngine.class).createThread("u", NewThread.empty()).id();
            assertThat(context.getBean(ChatStore.class).findThread(id)).isPresent();
        });
        runner.withPropertyValues("spring.datasource.url=jdbc:sqlite:" + dir.resolve("chat.db")).run(context ->
                assertThat(context.getBean(ChatEngine.class).listThreads("u")).as("kept across restarts").hasSize(1));
    }

    @Test
    void migrationsCanBeLeftToTheHost(@TempDir Path dir) {
        String url = "spring.datasource.url=jdbc:sqlite:" + dir.resolve("host.db");
        runner.withPropertyValues(url, "parley.store.migrate=false").run(context -> assertThat(context).hasFailed());
        SQLiteDataSource dataSource = new SQLiteDataSource();
        dataSource.setUrl("jdbc:sqlite:" + dir.resolve("host.db"));
        ParleyMigrations.migrate(dataSource);
        runner.withPropertyValues(url, "parley.store.migrate=false")
                .run(context -> assertThat(context.getBean(ChatStore.class)).isInstanceOf(JdbiChatStore.class));
    }

    @Test
    void withoutADataSourceTheStoreIsInMemoryAndAHostStoreWins() {
        runner.withClassLoader(new FilteredClassLoader(DataSource.class))
                .run(context -> assertThat(context.getBean(ChatStore.class)).isInstanceOf(InMemoryChatStore.class));
        InMemoryChatStore mine = new InMemoryChatStore();
        runner.withPropertyValues("spring.datasource.url=jdbc:sqlite::memory:")
                .withBean(ChatStore.class, () -> mine)
                .run(context -> assertThat(context.getBean(ChatStore.class)).isSameAs(mine));
    }
}
