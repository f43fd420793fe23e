package dev.parley.chat.hermes;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A bare HTTP/1.1 server over a real loopback socket, for what a mock server cannot do: write part of a
 * stream and then reset the connection, go silent, hold a stream open until another request arrives,
 * or notice that the client closed the connection. Each connection gets its own thread.
 */
final class RawServer implements AutoCloseable {

    /** One request: its line ({@code POST /run}), headers (lower-case names), body, and the connection to answer on. */
    record Exchange(String line, Map<String, String> headers, String body, Socket socket, OutputStream out) {
        boolean is(String method, String path) {
            return line.startsWith(method + " " + path + " ") || line.startsWith(method + " " + path + "?");
        }

        /** A header's value, or null. */
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }

        /** The path without the query. */
        String path() {
            String[] parts = line.split(" ");
            String target = parts.length > 1 ? parts[1] : "";
            int query = target.indexOf('?');
            return query < 0 ? target : target.substring(0, query);
        }

        /** Answers a JSON body with a length, and closes. */
        void json(int status, String json) throws IOException {
            answer(status, "application/json", json);
        }

        /** Answers a body of this content type with a length, and closes. */
        void answer(int status, String contentType, String text) throws IOException {
            byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
            out.write(("HTTP/1.1 " + status + " X\r\nContent-Type: " + contentType + "\r\nContent-Length: " + bytes.length
                    + "\r\nConnection: close\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            out.write(bytes);
            out.flush();
        }

        /** Starts an event stream whose body ends when the connection closes. */
        void streamHead() throws IOException {
            out.write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
            out.flush();
        }

        void write(String text) throws IOException {
            out.write(text.getBytes(StandardCharsets.UTF_8));
            out.flush();
        }

        /** Resets the connection (RST), as a crashed peer or a dropped NAT mapping would. */
        void reset() throws IOException {
            socket.setSoLinger(true, 0);
            socket.close();
        }
    }

    @FunctionalInterface
    interface Handler {
        void handle(Exchange exchange) throws Exception;
    }

    private final ServerSocket server;
    private final Handler handler;
    private final List<String> requests = new CopyOnWriteArrayList<>();
    private final List<String> bodies = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    RawServer(Handler handler) throws IOException {
        this(0, handler);
    }

    /** A server on this port (0 for any free one). */
    RawServer(int port, Handler handler) throws IOException {
        this.handler = handler;
        this.server = new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
        Thread acceptor = new Thread(this::accept, "raw-server-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    String baseUrl() {
        return "http://127.0.0.1:" + server.getLocalPort();
    }

    /** The request lines received, in order. */
    List<String> requests() {
        return requests;
    }

    List<String> bodies() {
        return bodies;
    }

    private void accept() {
        while (!closed) {
            try {
                Socket socket = server.accept();
                Thread worker = new Thread(() -> serve(socket), "raw-server-conn");
                worker.setDaemon(true);
                worker.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(Socket socket) {
        try (socket) {
            InputStream in = socket.getInputStream();
            String head = readHead(in);
            String line = head.lines().findFirst().orElse("");
            Map<String, String> headers = new LinkedHashMap<>();
            for (String header : head.split("\r\n")) {
                int colon = header.indexOf(':');
                if (colon > 0 && !header.startsWith(line)) {
                    headers.put(header.substring(0, colon).trim().toLowerCase(Locale.ROOT), header.substring(colon + 1).trim());
                }
            }
            int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
            String body = new String(in.readNBytes(length), StandardCharsets.UTF_8);
            synchronized (requests) {
                requests.add(line);
                bodies.add(body);
            }
            handler.handle(new Exchange(line, headers, body, socket, socket.getOutputStream()));
        } catch (Exception e) {
            // the test decides what a broken connection means
        }
    }

    private static String readHead(InputStream in) throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("the client closed before the end of the request head");
            }
            head.write(b);
            matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        return head.toString(StandardCharsets.US_ASCII);
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
    }
}
