package dev.parley.chat.hermes.internal;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.hermes.HermesConfig;
import java.time.Duration;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the adapter knows about its API server: read on first contact ({@code GET /health},
 * {@code GET /v1/capabilities}, and {@code GET /v1/models} when the host lists no models), kept for the
 * configured time, read again after {@link #invalidate()} (a call to the server failed: it may have been
 * restarted, or upgraded). Thread-safe; at most one thread reads the server at a time.
 */
public final class ApiServerInfo {
    private static final Logger log = LoggerFactory.getLogger(ApiServerInfo.class);

    private final HermesHttp http;
    private final HermesConfig config;
    private final Duration ttl;
    private @Nullable ApiServerProfile profile;
    private long readAt;

    public ApiServerInfo(HermesHttp http, HermesConfig config) {
        this.http = http;
        this.config = config;
        this.ttl = config.apiServerInfoTtl();
    }

    /**
     * The server's profile, read now if nothing is known or it is stale. Never throws: a server that cannot
     * be read gives what was known before, else the oldest line's profile (not kept, so the next call asks
     * again).
     */
    public synchronized ApiServerProfile get() {
        ApiServerProfile known = profile;
        if (known != null && System.nanoTime() - readAt < ttl.toNanos()) {
            return known;
        }
        HermesHttp.Probe health = probe("health");
        if (health == null || health.status() != 200) {
            log.info("The Hermes API server at {} did not answer GET /health ({}); assuming {}", http.where(),
                    health == null ? "unreachable" : "HTTP " + health.status(),
                    known == null ? "its oldest line" : "what it said before");
            return known != null ? known : ApiServerProfile.unknown(config);
        }
        HermesHttp.Probe capabilities = probe("v1", "capabilities");
        if (capabilities != null && (capabilities.status() == 401 || capabilities.status() == 403)) {
            log.warn("The Hermes API server at {} refused GET /v1/capabilities (HTTP {}): check the bearer token",
                    http.where(), capabilities.status());
            return known != null ? known : ApiServerProfile.unknown(config);
        }
        JsonNode models = null;
        if (config.modelResolver().models().isEmpty()) {
            HermesHttp.Probe listed = probe("v1", "models");
            models = listed != null && listed.status() == 200 ? listed.json() : null;
        }
        ApiServerProfile read = ApiServerProfile.of(health.json(),
                capabilities != null && capabilities.status() == 200 ? capabilities.json() : null, models, config);
        if (known == null || !read.describe().equals(known.describe())) {
            log.info("The Hermes API server at {}: {}", http.where(), read.describe());
        }
        profile = read;
        readAt = System.nanoTime();
        return read;
    }

    /** What is known now, without asking the server; null before the first contact. */
    public synchronized @Nullable ApiServerProfile known() {
        return profile;
    }

    /** A call to the server failed: read it again before the next run. */
    public synchronized void invalidate() {
        readAt = System.nanoTime() - ttl.toNanos() - 1;
    }

    private HermesHttp.@Nullable Probe probe(String... path) {
        try {
            return http.probe(http.request(http.url(path)).get().build());
        } catch (RuntimeException e) {
            return null;
        }
    }
}
