package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.spring.HttpSupport.SseEvent;
import dev.parley.chat.spring.internal.tomcat.SizedBufferHttp11NioProtocol;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Objects;
import org.apache.catalina.connector.Connector;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.boot.tomcat.TomcatWebServer;
import org.springframework.boot.web.server.servlet.context.ServletWebServerApplicationContext;

/**
 * {@code parley.web.tomcat.*} on a real Tomcat over loopback: the connector takes the smaller buffers, a
 * run's stream of 4 MB still arrives whole and in order through them, and a normal response larger than
 * the response buffer (the browser client script) arrives byte for byte.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "parley.owner.mode=HEADER",
    "parley.web.tomcat.connection-buffer-size=1KB",
    "parley.web.tomcat.response-buffer-size=1KB"
})
class TomcatIdleStreamSettingsHttpTest {
    @LocalServerPort
    int port;
    @Autowired
    ServletWebServerApplicationContext context;

    @Test
    void theConnectorTakesTheSmallerBuffers() {
        Connector connector = ((TomcatWebServer) Objects.requireNonNull(context.getWebServer())).getTomcat().getConnector();
        assertThat(String.valueOf(connector.getProperty("socket.appReadBufSize"))).isEqualTo("1024");
        assertThat(String.valueOf(connector.getProperty("socket.appWriteBufSize"))).isEqualTo("1024");
        assertThat(String.valueOf(connector.getProperty("maxTrailerSize"))).isEqualTo("1024");
        assertThat(connector.getProtocolHandler()).isInstanceOf(SizedBufferHttp11NioProtocol.class);
        assertThat(connector.getProtocolHandler().getDesiredBufferSize()).isEqualTo(1024);
    }

    @Test
    void aLargeStreamArrivesWholeAndInOrder() throws Exception {
        HttpSupport http = new HttpSupport(port);
        String session = http.newSession("alice");
        String run = http.startRun("alice", session, "flood").get("runId").asText();
        List<SseEvent> events;
        try (HttpSupport.Stream stream = http.stream("alice", run, null)) {
            events = stream.readUntil(SseEvent::terminal);
        }
        assertThat(events.get(events.size() - 1).event()).isEqualTo("run_finished");
        assertThat(events.stream().filter(e -> e.event().equals("text_delta")).count()).isEqualTo(2_000);
        for (int i = 1; i < events.size(); i++) {
            assertThat(events.get(i).seq()).isEqualTo(events.get(i - 1).seq() + 1);
        }
    }

    @Test
    void aNormalResponseLargerThanTheBufferArrivesWhole() throws Exception {
        byte[] expected;
        try (InputStream in = Objects.requireNonNull(getClass().getResourceAsStream("/META-INF/resources/parley/parley-client.js"))) {
            expected = in.readAllBytes();
        }
        assertThat(expected.length).as("the script is larger than the 1 KB response buffer").isGreaterThan(8 * 1024);
        HttpResponse<byte[]> response = HttpSupport.HTTP.send(HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + port + "/parley/parley-client.js")).build(), HttpResponse.BodyHandlers.ofByteArray());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.body()).isEqualTo(expected);
    }
}
