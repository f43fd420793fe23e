package dev.parley.chaos;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.store.ChatStore;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * A Spring Boot host in this JVM: the starter's defaults (Tomcat, REST + SSE, the JDBI store on a SQLite
 * file through Hikari) over a runtime the test gives, on a free loopback port, one owner.
 */
final class InProcessHost implements AutoCloseable {
    private static final AtomicReference<RuntimeAdapter> RUNTIME = new AtomicReference<>();

    /** The host's only configuration of its own: the test's runtime. */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class Host {
        @Bean
        RuntimeAdapter chaosRuntime() {
            return RUNTIME.get();
        }
    }

    private final ConfigurableApplicationContext context;

    private InProcessHost(ConfigurableApplicationContext context) {
        this.context = context;
    }

    /** Starts a host over {@code runtime} and a SQLite file; {@code arguments} add or override properties. */
    static synchronized InProcessHost start(RuntimeAdapter runtime, Path sqliteFile, String... arguments) {
        RUNTIME.set(runtime);
        List<String> args = new ArrayList<>(List.of(
                "--server.port=0",
                "--server.address=127.0.0.1",
                "--spring.main.banner-mode=off",
                "--spring.jmx.enabled=false",
                "--logging.level.root=WARN",
                "--spring.datasource.url=jdbc:sqlite:" + sqliteFile.toAbsolutePath(),
                "--spring.datasource.hikari.maximum-pool-size=8",
                "--parley.owner.mode=FIXED",
                "--parley.owner.fixed=chaos",
                // the checks compare a run's every step with its stored events: show them all
                "--parley.engine.max-steps-per-answer=1000000",
                "--server.tomcat.threads.max=400",
                "--server.tomcat.max-connections=20000"));
        args.addAll(List.of(arguments));
        ConfigurableApplicationContext context = new SpringApplicationBuilder(Host.class)
                .web(WebApplicationType.SERVLET).run(args.toArray(String[]::new));
        return new InProcessHost(context);
    }

    String baseUrl() {
        return "http://127.0.0.1:" + context.getEnvironment().getRequiredProperty("local.server.port");
    }

    ChatEngine engine() {
        return context.getBean(ChatEngine.class);
    }

    ChatStore store() {
        return context.getBean(ChatStore.class);
    }

    <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    @Override
    public void close() {
        context.close();
    }
}
