package dev.parley.bench.web;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.store.ChatStore;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.boot.Banner;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.support.GenericApplicationContext;

/**
 * A Spring Boot application with Parley's starter on Tomcat, in this JVM, on a free port: the way a host
 * uses the starter. The owner is fixed ({@code parley.owner.mode=FIXED}); everything else is the
 * starter's default unless given.
 */
public final class SpringHost implements AutoCloseable {
    private final ConfigurableApplicationContext context;
    private final int port;

    private SpringHost(ConfigurableApplicationContext context) {
        this.context = context;
        Integer local = context.getEnvironment().getProperty("local.server.port", Integer.class);
        if (local == null) {
            throw new IllegalStateException("the web server did not report its port");
        }
        this.port = local;
    }

    /** Starts the servlet host (Tomcat, the starter's endpoints) with this runtime and store, and these properties. */
    public static SpringHost start(RuntimeAdapter runtime, ChatStore store, Map<String, Object> properties) {
        return start(runtime, store, properties, false);
    }

    /**
     * Starts the host: on Tomcat with the starter's servlet endpoints, or ({@code reactive}) on Netty with
     * WebFlux, where {@link FluxStreams} serves {@code /flux/runs/{runId}/stream} through the starter's
     * {@code ParleyFlux}.
     */
    public static SpringHost start(RuntimeAdapter runtime, ChatStore store, Map<String, Object> properties,
            boolean reactive) {
        Map<String, Object> defaults = new LinkedHashMap<>();
        defaults.put("server.port", "0");
        defaults.put("server.address", "127.0.0.1");
        defaults.put("parley.owner.mode", "FIXED");
        defaults.put("parley.owner.fixed", "bench");
        defaults.put("spring.jmx.enabled", "false");
        defaults.put("logging.level.root", "WARN");
        defaults.put("logging.level.dev.parley.chat.spring.internal.OwnerResolvers", "ERROR");
        if (reactive) {
            defaults.put("spring.main.web-application-type", "reactive");
        }
        defaults.putAll(properties);
        SpringApplication app = new SpringApplication(BenchWebApp.class);
        app.setBannerMode(Banner.Mode.OFF);
        app.setLogStartupInfo(false);
        app.setDefaultProperties(defaults);
        app.addInitializers(ctx -> {
            GenericApplicationContext generic = (GenericApplicationContext) ctx;
            generic.registerBean("benchRuntime", RuntimeAdapter.class, () -> runtime);
            generic.registerBean("benchStore", ChatStore.class, () -> store);
            generic.registerBean("benchSubscribers", SubscriberCounter.class, SubscriberCounter::new);
            if (reactive) {
                generic.registerBean("benchNetty", org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory.class, () -> {
                    org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory factory =
                            new org.springframework.boot.reactor.netty.NettyReactiveWebServerFactory(0);
                    factory.setAddress(java.net.InetAddress.getLoopbackAddress());
                    return factory;
                });
                generic.registerBean(FluxStreams.class);
            }
        });
        return new SpringHost(app.run());
    }

    public int port() {
        return port;
    }

    /** The path of a run's event stream on this host. */
    public String streamPath(String runId, boolean reactive) {
        return reactive ? "/flux/runs/" + runId + "/stream" : "/api/chat/runs/" + runId + "/stream";
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + port + "/api/chat";
    }

    public ChatEngine engine() {
        return context.getBean(ChatEngine.class);
    }

    public <T> T bean(Class<T> type) {
        return context.getBean(type);
    }

    @Override
    public void close() {
        context.close();
    }
}
