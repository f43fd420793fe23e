package dev.parley.bench;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * A fast OpenAI-compatible server on loopback: {@code POST /v1/chat/completions} answers every call with one
 * streamed completion rendered in advance, N content chunks ({@code "t<i> "}), a finish chunk, a usage chunk and
 * {@code [DONE]}, written in large blocks. The JDK's own HTTP server, so that the server costs little next to the
 * clients measured.
 */
final class CompletionStub implements AutoCloseable {
    static final String PATH = "/v1/chat/completions";
    private final HttpServer server;
    private final ExecutorService executor = Executors.newFixedThreadPool(2, r -> {
        Thread thread = new Thread(r, "completion-stub");
        thread.setDaemon(true);
        return thread;
    });
    private final byte[] body;

    private CompletionStub(int chunks) throws IOException {
        this.body = render(chunks);
        this.server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 64);
        server.setExecutor(executor);
        server.createContext(PATH, exchange -> {
            try (InputStream in = exchange.getRequestBody()) {
                in.readAllBytes();
            }
            exchange.getResponseHeaders().set("Content-Type", "text/event-stream");
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                for (int at = 0; at < body.length; at += 64 * 1024) {
                    out.write(body, at, Math.min(64 * 1024, body.length - at));
                }
            }
        });
        server.start();
    }

    /** Starts a stub whose completion has {@code chunks} content chunks. */
    static CompletionStub start(int chunks) throws IOException {
        return new CompletionStub(chunks);
    }

    /** The base URL OpenAI clients take, ending in {@code /v1}. */
    String baseUrl() {
        return "http://127.0.0.1:" + server.getAddress().getPort() + "/v1";
    }

    /** The bytes of one completion. */
    int size() {
        return body.length;
    }

    private static byte[] render(int chunks) {
        StringBuilder sse = new StringBuilder(chunks * 160);
        String head = "data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1,"
                + "\"model\":\"bench-model\",\"choices\":[{\"index\":0,\"delta\":";
        sse.append(head).append("{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n");
        for (int i = 0; i < chunks; i++) {
            sse.append(head).append("{\"content\":\"t").append(i).append(" \"},\"finish_reason\":null}]}\n\n");
        }
        sse.append(head).append("{},\"finish_reason\":\"stop\"}]}\n\n");
        sse.append("data: {\"id\":\"chatcmpl-bench\",\"object\":\"chat.completion.chunk\",\"created\":1,"
                + "\"model\":\"bench-model\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":")
                .append(chunks).append(",\"total_tokens\":").append(chunks + 10).append("}}\n\n");
        sse.append("data: [DONE]\n\n");
        return sse.toString().getBytes(StandardCharsets.UTF_8);
    }

    @Override
    public void close() {
        server.stop(0);
        executor.shutdownNow();
    }
}
