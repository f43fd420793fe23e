package dev.parley.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The host-tool scenario calls the offered tool the message names, else the first one offered. */
class HostToolChoiceTest {
    private static final String TOOLS = "[{\"name\":\"lookup_order\"},{\"name\":\"refund_order\"}]";

    private final HttpClient http = HttpClient.newHttpClient();
    private BridgeSimulator simulator;

    @BeforeEach
    void start() throws Exception {
        simulator = BridgeSimulator.start(SimulatorConfig.builder().port(0).build());
    }

    @AfterEach
    void stop() {
        simulator.close();
    }

    /** Starts a run offering both tools and gives the {@code tool_call} frame it sends, then cancels it. */
    private String toolCallFrame(String runId, String message) throws Exception {
        List<String> lines = new CopyOnWriteArrayList<>();
        HttpRequest run = HttpRequest.newBuilder(URI.create(simulator.baseUrl() + "/run"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString("{\"runId\":\"" + runId + "\",\"userMessage\":\"" + message
                        + "\",\"hostTools\":" + TOOLS + "}"))
                .build();
        CompletableFuture<Void> stream = http.sendAsync(run, HttpResponse.BodyHandlers.ofLines())
                .thenAccept(response -> response.body().forEach(lines::add));
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (lines.stream().noneMatch(line -> line.contains("\"kind\":\"tool_call\""))) {
            assertThat(System.nanoTime()).as("a tool_call frame in %s", lines).isLessThan(deadline);
            Thread.sleep(10);
        }
        http.send(HttpRequest.newBuilder(URI.create(simulator.baseUrl() + "/runs/" + runId + "/cancel"))
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.noBody()).timeout(Duration.ofSeconds(5)).build(),
                HttpResponse.BodyHandlers.discarding());
        stream.get(10, TimeUnit.SECONDS);
        return lines.stream().filter(line -> line.contains("\"kind\":\"tool_call\"")).findFirst().orElseThrow();
    }

    @Test
    void theToolTheMessageNamesIsCalled() throws Exception {
        assertThat(toolCallFrame("r1", "action: please use Refund_Order for order 42"))
                .contains("\"toolName\":\"refund_order\"");
    }

    @Test
    void withoutAToolNamedTheFirstOfferedIsCalled() throws Exception {
        assertThat(toolCallFrame("r2", "use the host tool")).contains("\"toolName\":\"lookup_order\"");
    }
}
