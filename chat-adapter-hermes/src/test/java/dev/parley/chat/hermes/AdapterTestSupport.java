package dev.parley.chat.hermes;

import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;

import com.github.tomakehurst.wiremock.WireMockServer;
import com.github.tomakehurst.wiremock.client.ResponseDefinitionBuilder;
import com.github.tomakehurst.wiremock.client.WireMock;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.RunRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;

/** One WireMock server per test class over real loopback HTTP, adapters closed after each test, fixtures. */
abstract class AdapterTestSupport {
    static WireMockServer wiremock;
    private final List<HermesRuntimeAdapter> adapters = new ArrayList<>();

    @BeforeAll
    static void startWireMock() {
        wiremock = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));
        wiremock.start();
    }

    @AfterAll
    static void stopWireMock() {
        wiremock.stop();
    }

    @BeforeEach
    void resetWireMock() {
        wiremock.resetAll();
    }

    @AfterEach
    void closeAdapters() {
        adapters.forEach(HermesRuntimeAdapter::close);
    }

    String wiremockUrl() {
        return "http://127.0.0.1:" + wiremock.port();
    }

    /** An adapter on WireMock with fast re-attach settings, customised by {@code config}. */
    HermesRuntimeAdapter adapter(Consumer<HermesConfig.Builder> config) {
        return adapter(wiremockUrl(), config);
    }

    HermesRuntimeAdapter adapter(String baseUrl, Consumer<HermesConfig.Builder> config) {
        HermesConfig.Builder builder = HermesConfig.builder().baseUrl(baseUrl).reattachAttempts(2)
                .reattachBackoff(Duration.ofMillis(50)).idleTimeout(Duration.ofSeconds(5));
        config.accept(builder);
        HermesRuntimeAdapter adapter = new HermesRuntimeAdapter(builder.build());
        adapters.add(adapter);
        return adapter;
    }

    HermesRuntimeAdapter adapter() {
        return adapter(b -> {
        });
    }

    static RunRequest request() {
        return request(null, List.of());
    }

    static RunRequest request(String sessionId, List<HostToolSpec> tools) {
        return new RunRequest("t1", "r1", "alice", "r1:answer", "Hello there", sessionId, null, null, null, tools, Map.of());
    }

    static String fixture(String name) {
        return Fixtures.text(name);
    }

    static ResponseDefinitionBuilder sse(String fixture) {
        return WireMock.aResponse().withStatus(200).withHeader("Content-Type", "text/event-stream")
                .withBody(fixture(fixture));
    }

    static ResponseDefinitionBuilder errorBody(int status, String code, String message) {
        return WireMock.aResponse().withStatus(status).withHeader("Content-Type", "application/json")
                .withBody("{\"error\":{\"code\":\"" + code + "\",\"message\":\"" + message + "\",\"retryable\":false}}");
    }

    /** A port nothing listens on. */
    static int closedPort() {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** One SSE frame as the Bridge writes it. */
    static String frame(long seq, String kind, String payloadJson) {
        String extra = payloadJson.isEmpty() ? "" : "," + payloadJson;
        return "id: " + seq + "\nevent: " + kind + "\ndata: {\"runId\":\"r1\",\"seq\":" + seq + ",\"ts\":1,\"kind\":\"" + kind
                + "\"" + extra + "}\n\n";
    }
}
