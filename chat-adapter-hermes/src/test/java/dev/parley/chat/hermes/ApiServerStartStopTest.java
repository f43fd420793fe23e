package dev.parley.chat.hermes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import dev.parley.chat.testing.StreamCollector;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.RunStatus;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Safe starts (sent again only when they provably never arrived, or under an Idempotency-Key the server
 * honours) and stops (of a running run, and of one that already ended: its real end state, no error).
 */
class ApiServerStartStopTest extends ApiServerTestSupport {

    @Test
    void aStartThatNeverReachedTheServerIsSentAgain() throws Exception {
        int port = closedPort();
        HermesRuntimeAdapter adapter = adapter("http://127.0.0.1:" + port, b -> b.transport(HermesTransport.API_SERVER)
                .bearerToken(HermesApiStub.KEY).reattachAttempts(6).reattachBackoff(java.time.Duration.ofMillis(100)));
        StreamCollector collector = StreamCollector.unbounded();
        adapter.generateResponse(request()).subscribe(collector);
        StreamCollector.sleep(150);
        try (HermesApiStub hermes = new HermesApiStub(HermesApiStub.Line.V0_19, port)) {
            collector.awaitDone().assertContract();

            assertThat(collector.last()).isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
            assertThat(hermes.runs()).hasSize(1);
        }
    }

    @Test
    void on019AStartWhoseAnswerWasLostFailsRatherThanStartingTwice() {
        HermesApiStub hermes = stub(HermesApiStub.Line.V0_19);
        hermes.loseStartAnswers(1);

        List<AgentStreamEvent> events = StreamCollector.collect(apiAdapter(hermes).generateResponse(request()));

        assertThat(events).singleElement().isInstanceOfSatisfying(AgentStreamEvent.RunFailed.class, failed -> {
            assertThat(failed.code()).isEqualTo(ErrorCode.RUNTIME_UNAVAILABLE.name());
            assertThat(failed.message()).contains("may have reached it", "0.19.0", "does not honour Idempotency-Key",
                    "start the run twice");
        });
        assertThat(hermes.count("POST /v1/runs ")).as("sent once, also by OkHttp").isEqualTo(1);
        assertThat(hermes.runs()).hasSize(1);
    }

    @Test
    void okHttpDoesNotRepeatAStartOnAStaleKeptAliveConnectionEither() throws Exception {
        AtomicInteger starts = new AtomicInteger();
        try (ServerSocket server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
            Thread acceptor = new Thread(() -> keepAlive(server, starts), "keep-alive-server");
            acceptor.setDaemon(true);
            acceptor.start();
            HermesRuntimeAdapter adapter = adapter("http://127.0.0.1:" + server.getLocalPort(),
                    b -> b.transport(HermesTransport.API_SERVER).bearerToken(HermesApiStub.KEY));

            List<AgentStreamEvent> events = StreamCollector.collect(adapter.generateResponse(request()));

            assertThat(events).singleElement().isInstanceOf(AgentStreamEvent.RunFailed.class);
            assertThat(starts.get()).as("OkHttp retries a failed request on a reused connection unless its body is"
                    + " one-shot").isEqualTo(1);
        }
    }

    /** Answers GETs on kept-alive connections; closes a connection on a POST, without an answer, as a peer gone stale. */
    private static void keepAlive(ServerSocket server, AtomicInteger starts) {
        while (!server.isClosed()) {
            try {
                Socket socket = server.accept();
                Thread worker = new Thread(() -> {
                    try (socket) {
                        InputStream in = socket.getInputStream();
                        OutputStream out = socket.getOutputStream();
                        while (true) {
                            String head = readHead(in);
                            int length = 0;
                            for (String header : head.split("\r\n")) {
                                if (header.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                                    length = Integer.parseInt(header.substring(15).trim());
                                }
                            }
                            in.readNBytes(length);
                            if (head.startsWith("POST")) {
                                starts.incrementAndGet();
                                return;
                            }
                            byte[] body = (head.startsWith("GET /health ") ? "{\"status\": \"ok\", \"version\": \"0.19.0\"}"
                                    : "{\"object\": \"list\", \"data\": []}").getBytes(StandardCharsets.UTF_8);
                            out.write(("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: " + body.length
                                    + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
                            out.write(body);
                            out.flush();
                        }
                    } catch (IOException e) {
                        // the client went away
                    }
                });
                worker.setDaemon(true);
                worker.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("closed");
            }
            head.write(b);
            matched = b == "\r\n\r\n".charAt(matched) ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        return head.toString(StandardCharsets.US_ASCII);
    }

    @Test
    void onNewerLinesALostAnswerIsAskedAgainUnderTheSameKey() {
        HermesApiStub hermes = stub(HermesApiStub.Line.NEWER);
        hermes.loseStartAnswers(1);

        List<AgentStreamEvent> events = StreamCollector.collect(apiAdapter(hermes).generateResponse(request()));

        assertThat(events).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        assertThat(hermes.count("POST /v1/runs ")).isEqualTo(2);
        assertThat(hermes.runs()).as("the key made the second request a replay").hasSize(1);
    }

    @ParameterizedTest
    @EnumSource(HermesApiStub.Line.class)
    void aStopEndsTheRunCancelledWithWhatItHadSaid(HermesApiStub.Line line) {
        HermesApiStub hermes = stub(line);
        hermes.script = body -> "approval.sse";
        HermesRuntimeAdapter adapter = apiAdapter(hermes);
        StreamCollector collector = StreamCollector.unbounded();
        adapter.generateResponse(request()).subscribe(collector);
        collector.awaitCount(3);

        adapter.cancel("r1");

        collector.awaitDone().assertContract();
        assertThat(collector.last()).isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "stopped"));
        assertThat(hermes.count("POST /v1/runs/" + hermes.runs().get(0).id + "/stop")).isEqualTo(1);
    }

    @ParameterizedTest
    @EnumSource(HermesApiStub.Line.class)
    void aStopAfterTheEndIsNoErrorAndTheRunKeepsItsRealEnd(HermesApiStub.Line line) {
        HermesApiStub hermes = stub(line);
        CountDownLatch hold = new CountDownLatch(1);
        hermes.holdTerminal = hold;
        HermesRuntimeAdapter adapter = apiAdapter(hermes);
        StreamCollector collector = StreamCollector.unbounded();
        adapter.generateResponse(request()).subscribe(collector);
        await(() -> hermes.runs().isEmpty() ? "" : hermes.runs().get(0).statusJson(), s -> s.contains("\"completed\""),
                "the run to end on Hermes");

        assertThatCode(() -> adapter.cancel("r1")).as(line + " answers 404 or the end status").doesNotThrowAnyException();
        hold.countDown();

        collector.awaitDone().assertContract();
        assertThat(collector.last()).isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        assertThatCode(() -> adapter.cancel("r1")).as("ended here too").doesNotThrowAnyException();
    }
}
