package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.parley.chat.json.ChatJson;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Browsers that reset their SSE connection while the host writes to it: each stream must end there, as
 * the client left it — not be handed to the container's error page (which then fails to write a JSON
 * error into an event stream, and logs two warnings per dropped browser) — and the requests beside the
 * droppers must each get one whole, well-formed answer. Over real sockets; the web layer must log no
 * warning while browsers drop.
 */
@LoopbackHttpTest
class DroppedClientsHttpTest {
    private static final String OWNER = "dora";
    /** The loggers of the web layer (runs of other test classes' contexts may log in the same JVM). */
    private static final List<String> WEB_LOGGERS = List.of("org.springframework", "org.apache", "dev.parley.chat.spring");

    @LocalServerPort
    int port;

    @Test
    void streamsResetMidWriteDoNotTouchOtherResponses() throws Exception {
        HttpSupport http = new HttpSupport(port);
        String session = http.post(OWNER, "/api/chat/sessions", "{}").json().get("id").asText();
        String flood = http.post(OWNER, "/api/chat/sessions/" + session + "/runs",
                ChatJson.shared().write(Map.of("message", "flood"))).json().get("runId").asText();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!http.get(OWNER, "/api/chat/runs/" + flood + "/state").json().get("run").get("status").asText()
                .equals("SUCCEEDED")) {
            assertThat(System.nanoTime()).as("the flood run to succeed").isLessThan(deadline);
            Thread.sleep(20);
        }

        Logger root = (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        ListAppender<ILoggingEvent> logged = new ListAppender<>();
        logged.start();
        root.addAppender(logged);
        AtomicBoolean dropping = new AtomicBoolean(true);
        AtomicInteger drops = new AtomicInteger();
        ExecutorService threads = Executors.newFixedThreadPool(5);
        List<Future<?>> droppers = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            long seed = i;
            droppers.add(threads.submit(() -> {
                Random random = new Random(seed);
                while (dropping.get()) {
                    dropMidStream(flood, 1 + random.nextInt(200_000), random.nextInt(3));
                    drops.incrementAndGet();
                }
                return null;
            }));
        }
        List<String> broken = new ArrayList<>();
        Future<?> checker = threads.submit(() -> {
            for (int i = 0; i < 300; i++) {
                String answer = exchange("GET /api/chat/runs/" + flood + "/state HTTP/1.1\r\nHost: localhost\r\n"
                        + "X-Parley-Owner: " + OWNER + "\r\nConnection: close\r\n\r\n");
                if (!wellFormed(answer)) {
                    broken.add(answer);
                }
            }
            return null;
        });
        checker.get(120, TimeUnit.SECONDS);
        dropping.set(false);
        for (Future<?> dropper : droppers) {
            dropper.get(30, TimeUnit.SECONDS);
        }
        threads.shutdown();
        root.detachAppender(logged);
        List<String> warnings = logged.list.stream().filter(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
                .filter(e -> WEB_LOGGERS.stream().anyMatch(e.getLoggerName()::startsWith))
                .map(ILoggingEvent::getFormattedMessage).distinct().toList();

        assertThat(drops.get()).isGreaterThan(100);
        assertThat(broken).as("answers broken by the dropped streams beside them").isEmpty();
        assertThat(warnings).as("warnings logged for %d dropped streams", drops.get()).isEmpty();
    }

    /**
     * Opens the run's stream, reads {@code bytes} of it (after a pause of {@code pauseMillis}), and resets. A
     * response that ends sooner (the server may answer or end a stream early) closes the connection, so the
     * dropper never waits on a kept-alive connection; a stream that stops sending fails the dropper.
     */
    private void dropMidStream(String runId, int bytes, int pauseMillis) throws IOException, InterruptedException {
        try (Socket socket = connect()) {
            socket.setSoTimeout(20_000);
            socket.getOutputStream().write(("GET /api/chat/runs/" + runId + "/stream HTTP/1.1\r\nHost: localhost\r\n"
                    + "Accept: text/event-stream\r\nX-Parley-Owner: " + OWNER + "\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[8192];
            int read = 0;
            Thread.sleep(pauseMillis);
            try {
                while (read < bytes) {
                    int n = in.read(buffer, 0, Math.min(buffer.length, bytes - read));
                    if (n < 0) {
                        break;
                    }
                    read += n;
                }
            } catch (java.net.SocketTimeoutException e) {
                throw new AssertionError("a stream stopped sending after " + read + " of the " + bytes
                        + " bytes its client wanted", e);
            }
            socket.setSoLinger(true, 0);
        }
    }

    /** Sends a request on a connection of its own and reads the whole answer (the server closes it). */
    private String exchange(String request) throws IOException {
        try (Socket socket = connect()) {
            socket.setSoTimeout(20_000);
            socket.getOutputStream().write(request.getBytes(StandardCharsets.US_ASCII));
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[8192];
            int n;
            while ((n = in.read(buffer)) >= 0) {
                answer.write(buffer, 0, n);
            }
            return answer.toString(StandardCharsets.UTF_8);
        }
    }

    /** A 200 with a JSON body of exactly its Content-Length, and nothing after it. */
    private static boolean wellFormed(String answer) {
        int end = answer.indexOf("\r\n\r\n");
        if (!answer.startsWith("HTTP/1.1 200") || end < 0) {
            return false;
        }
        String head = answer.substring(0, end).toLowerCase(Locale.ROOT);
        String body = answer.substring(end + 4);
        if (head.contains("transfer-encoding: chunked")) {
            body = dechunked(body);
            if (body == null) {
                return false;
            }
        }
        int at = head.indexOf("content-length:");
        if (at >= 0) {
            int length = Integer.parseInt(head.substring(at + 15, head.indexOf("\r\n", at) < 0 ? head.length()
                    : head.indexOf("\r\n", at)).strip());
            if (body.getBytes(StandardCharsets.UTF_8).length != length) {
                return false;
            }
        }
        try {
            return ChatJson.shared().readTree(body).has("run");
        } catch (RuntimeException notJson) {
            return false;
        }
    }

    /** A chunked body's data, or null if its framing is broken. */
    private static String dechunked(String chunked) {
        StringBuilder data = new StringBuilder();
        int at = 0;
        while (true) {
            int line = chunked.indexOf("\r\n", at);
            if (line < 0) {
                return null;
            }
            int size;
            try {
                size = Integer.parseInt(chunked.substring(at, line).strip(), 16);
            } catch (NumberFormatException e) {
                return null;
            }
            if (size == 0) {
                return chunked.substring(line + 2).equals("\r\n") ? data.toString() : null;
            }
            if (line + 2 + size + 2 > chunked.length()) {
                return null;
            }
            data.append(chunked, line + 2, line + 2 + size);
            at = line + 2 + size + 2;
        }
    }

    private Socket connect() throws IOException {
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 5_000);
        return socket;
    }
}
