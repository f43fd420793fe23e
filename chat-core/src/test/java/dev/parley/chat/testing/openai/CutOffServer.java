package dev.parley.chat.testing.openai;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Locale;

/**
 * A one-connection OpenAI-compatible server on loopback that dies mid-answer: it answers {@code 200} with a
 * {@code text/event-stream} body framed only by the connection ({@code Connection: close}, neither a length nor
 * chunks), writes the SSE events it was given (no finish reason, no {@code [DONE]}) and closes the connection.
 * To the client the body simply ends: nothing on the HTTP level says it was cut.
 */
public final class CutOffServer implements AutoCloseable {
    private final ServerSocket server;
    private final Thread thread;

    /** Serves {@code events} (e.g. {@code Sse.stream().text(…).partial()}) to the first request. */
    public CutOffServer(String events) throws IOException {
        server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
        thread = new Thread(() -> serve(events), "cut-off-server");
        thread.setDaemon(true);
        thread.start();
    }

    public String baseUrl() {
        return "http://127.0.0.1:" + server.getLocalPort() + "/v1";
    }

    private void serve(String events) {
        try (Socket socket = server.accept()) {
            readRequest(socket.getInputStream());
            OutputStream out = socket.getOutputStream();
            out.write(("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            out.write(events.getBytes(StandardCharsets.UTF_8));
            out.flush();
        } catch (IOException e) {
            // the client went first: nothing left to serve
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
        String headers = head.toString(StandardCharsets.US_ASCII).toLowerCase(Locale.ROOT);
        int at = headers.indexOf("content-length:");
        if (at >= 0) {
            int length = Integer.parseInt(headers.substring(at + 15, headers.indexOf("\r\n", at)).trim());
            in.readNBytes(length);
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
