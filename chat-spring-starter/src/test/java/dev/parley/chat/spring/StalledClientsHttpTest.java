package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.json.ChatJson;
import dev.parley.chat.spring.HttpSupport.SseEvent;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.tomcat.TomcatConnectorCustomizer;
import org.springframework.context.annotation.Bean;

/**
 * Clients that stop reading, over real sockets to a real Tomcat: they must not hold the engine's delivery
 * threads (there are only two here), so another owner's stream goes on at full speed, and their own
 * streams are cut once they have taken nothing for the write timeout.
 */
@SpringBootTest(classes = {TestApplication.class, StalledClientsHttpTest.SmallSendBuffers.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
            "parley.owner.mode=HEADER",
            "parley.engine.delivery-threads=2",
            "parley.web.heartbeat=200ms",
            "parley.web.stream-buffer-size=64KB",
            "parley.web.stream-write-timeout=1s",
            "server.tomcat.threads.max=4",
            "server.tomcat.threads.min-spare=1"
        })
class StalledClientsHttpTest {
    private static final Pattern EVENT = Pattern.compile(":ping\n\n|id:(\\d+)\nevent:([a-z_]+)\ndata:[^\n]*\n\n");

    @LocalServerPort
    int port;
    @Autowired
    MeterRegistry registry;

    /**
     * A small, fixed socket send buffer, so that a client that stops reading stalls the server's writes at
     * once, and a meter registry, to see the open streams.
     */
    @TestConfiguration(proxyBeanMethods = false)
    static class SmallSendBuffers {
        @Bean
        TomcatConnectorCustomizer smallSendBuffers() {
            return connector -> connector.setProperty("socket.txBufSize", "16384");
        }

        @Bean
        MeterRegistry meterRegistry() {
            return new SimpleMeterRegistry();
        }
    }

    @Test
    void clientsThatStopReadingDelayNoOtherStreamAndAreCut() throws Exception {
        HttpSupport http = new HttpSupport(port);
        String floodSession = http.post("alice", "/api/chat/sessions", "{}").json().get("id").asText();
        String flood = http.post("alice", "/api/chat/sessions/" + floodSession + "/runs",
                ChatJson.shared().write(Map.of("message", "flood"))).json().get("runId").asText();
        awaitSucceeded(http, "alice", flood);

        List<Socket> stalled = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                stalled.add(openAndStopReading(flood, "alice"));
            }
            Thread.sleep(500);

            String session = http.post("bob", "/api/chat/sessions", "{}").json().get("id").asText();
            long start = System.nanoTime();
            CompletableFuture<List<SseEvent>> bobsStream = CompletableFuture.supplyAsync(() -> {
                String run = http.post("bob", "/api/chat/sessions/" + session + "/runs", "{\"message\":\"hello\"}")
                        .json().get("runId").asText();
                try (HttpSupport.Stream stream = http.stream("bob", run, null)) {
                    return stream.readUntil(SseEvent::terminal);
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            List<SseEvent> events = bobsStream.get(20, TimeUnit.SECONDS);
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            assertThat(events).hasSizeGreaterThanOrEqualTo(8);
            assertThat(events.get(events.size() - 1).event()).isEqualTo("run_finished");
            assertThat(millis).as("another owner's stream, with three stalled readers on two delivery threads")
                    .isLessThan(5_000);

            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (gauge("parley.sse.streams.open") > 0 || gauge("parley.subscribers.open") > 0) {
                assertThat(System.nanoTime()).as("the stalled streams to be cut, and their subscriptions with them")
                        .isLessThan(deadline);
                Thread.sleep(20);
            }
            for (Socket socket : stalled) {
                String body = readToEnd(socket);
                assertThat(body).as("the server answered the stream").startsWith("HTTP/1.1 200");
                String sse = body.substring(body.indexOf("\r\n\r\n") + 4);
                Matcher matcher = EVENT.matcher(sse);
                long expected = 1;
                int end = 0;
                String lastType = null;
                while (matcher.find() && matcher.start() == end) {
                    end = matcher.end();
                    if (matcher.group(1) == null) {
                        continue;
                    }
                    assertThat(Long.parseLong(matcher.group(1))).isEqualTo(expected++);
                    lastType = matcher.group(2);
                }
                assertThat(sse.substring(end)).as("the cut stream holds whole events only").isEmpty();
                assertThat(expected).as("the stalled stream got some events").isGreaterThan(1);
                assertThat(lastType).as("the stalled stream was cut before the run's end").isNotEqualTo("run_finished");
            }
        } finally {
            for (Socket socket : stalled) {
                socket.close();
            }
        }
    }

    private double gauge(String name) {
        return registry.get(name).gauge().value();
    }

    private Socket openAndStopReading(String runId, String owner) throws IOException {
        Socket socket = new Socket();
        socket.setReceiveBufferSize(4096);
        socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5_000);
        String request = "GET /api/chat/runs/" + runId + "/stream HTTP/1.0\r\n"
                + "Host: localhost\r\nAccept: text/event-stream\r\nX-Parley-Owner: " + owner + "\r\n\r\n";
        socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
        socket.getOutputStream().flush();
        return socket;
    }

    /** Reads until the server closes the connection (HTTP/1.0: the end of the response); fails after 15 s. */
    private static String readToEnd(Socket socket) throws IOException {
        socket.setSoTimeout(15_000);
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        InputStream in = socket.getInputStream();
        byte[] buffer = new byte[64 * 1024];
        int n;
        while ((n = in.read(buffer)) >= 0) {
            body.write(buffer, 0, n);
        }
        return body.toString(StandardCharsets.UTF_8);
    }

    private static void awaitSucceeded(HttpSupport http, String owner, String runId) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!http.get(owner, "/api/chat/runs/" + runId + "/state").json().get("run").get("status").asText()
                .equals("SUCCEEDED")) {
            assertThat(System.nanoTime()).as("the flood run to succeed").isLessThan(deadline);
            Thread.sleep(20);
        }
    }
}
