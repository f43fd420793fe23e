package dev.parley.chat.testing.openai;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * A one-connection SSE server on loopback that streams an endless answer, one chunk every 100 ms (for at most
 * ten seconds), and notes when the client hangs up: what WireMock cannot tell a test.
 */
public final class HangUpServer implements AutoCloseable {
    private final ServerSocket server;
    private final Thread thread;
    /** Completes when a write fails because the client closed the connection. */
    public final CompletableFuture<Long> hungUpAtNanos = new CompletableFuture<>();

    public HangUpServer() throws IOException {
        server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        thread = new Thread(this::serve, "hang-up-server");
        thread.setDaemon(true);
        thread.start();
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + server.getLocalPort() + "/v1";
    }

    private void serve() {
        try (Socket socket = server.accept()) {
            readRequest(socket.getInputStream());
            OutputStream out = socket.getOutputStream();
            out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"
                    + "Connection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            writeChunk(out, Sse.stream().partial());
            for (int i = 0; i < 100; i++) {
                writeChunk(out, Sse.more().text("word" + i + " ").partial());
                TimeUnit.MILLISECONDS.sleep(100);
            }
        } catch (IOException e) {
            hungUpAtNanos.complete(System.nanoTime());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void readRequest(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        while (!head.toString(StandardCharsets.US_ASCII).endsWith("\r\n\r\n")) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("the client went before sending its request");
            }
            head.write(b);
        }
        String headers = head.toString(StandardCharsets.US_ASCII).toLowerCase(java.util.Locale.ROOT);
        int at = headers.indexOf("content-length:");
        if (at >= 0) {
            int length = Integer.parseInt(headers.substring(at + 15, headers.indexOf("\r\n", at)).trim());
            in.readNBytes(length);
        }
    }

    private static void writeChunk(OutputStream out, String data) throws IOException {
        byte[] bytes = data.getBytes(StandardCharsets.UTF_8);
        out.write((Integer.toHexString(bytes.length) + "\r\n").getBytes(StandardCharsets.US_ASCII));
        out.write(bytes);
        out.write("\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
    }

    @Override
    public void close() throws IOException {
        thread.interrupt();
        server.close();
    }
}
