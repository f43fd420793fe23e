package dev.parley.chaos;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * A browser's side of {@code GET …/runs/{id}/stream} on a bare socket, so that a test can drop the
 * connection anywhere — after any byte, also inside an event — with a FIN or a reset, and reconnect with
 * {@code Last-Event-ID}. Reads HTTP/1.1 with a chunked or a close-delimited body; hands over only whole
 * events (a blank line ends one), as a browser's EventSource does.
 */
final class SseClient {
    /** One whole event: its {@code id:} (the run's seq), {@code event:} and {@code data:} line. */
    record Event(long seq, String type, String data) {
        boolean terminal() {
            return type.equals("run_finished") || type.equals("run_failed");
        }
    }

    /** Longer than the host's heartbeat interval (15 s): a stream silent this long is a hung host. */
    static final int READ_TIMEOUT_MILLIS = 25_000;

    private SseClient() {
    }

    /**
     * Opens a stream.
     *
     * @param lastEventId the cursor for {@code Last-Event-ID}, or null for none
     * @throws IOException if the connection fails or the answer is not {@code 200}
     */
    static Stream open(String baseUrl, String path, @Nullable Long lastEventId) throws IOException {
        URI uri = URI.create(baseUrl);
        Socket socket = new Socket();
        socket.connect(new InetSocketAddress(uri.getHost(), uri.getPort()), 5_000);
        socket.setSoTimeout(READ_TIMEOUT_MILLIS);
        socket.setTcpNoDelay(true);
        StringBuilder head = new StringBuilder("GET ").append(path).append(" HTTP/1.1\r\n")
                .append("Host: ").append(uri.getHost()).append(':').append(uri.getPort()).append("\r\n")
                .append("Accept: text/event-stream\r\n");
        if (lastEventId != null) {
            head.append("Last-Event-ID: ").append(lastEventId).append("\r\n");
        }
        head.append("\r\n");
        OutputStream out = socket.getOutputStream();
        out.write(head.toString().getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return new Stream(socket);
    }

    /** An open stream; not thread-safe. */
    static final class Stream implements AutoCloseable {
        private final Socket socket;
        private final InputStream raw;
        private final boolean chunked;
        private long chunkLeft;
        private boolean ended;
        private long bytesRead;
        private long dropAt = Long.MAX_VALUE;
        private boolean resetOnDrop;
        private boolean dropped;

        private Stream(Socket socket) throws IOException {
            this.socket = socket;
            this.raw = new BufferedInputStream(socket.getInputStream(), 8192);
            String status = line(raw);
            boolean isChunked = false;
            String header;
            while (!(header = line(raw)).isEmpty()) {
                String lower = header.toLowerCase(Locale.ROOT);
                if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
                    isChunked = true;
                }
            }
            this.chunked = isChunked;
            if (!status.startsWith("HTTP/1.1 200")) {
                String body = new String(readRest(), StandardCharsets.UTF_8);
                socket.close();
                throw new IOException("the stream answered " + status + ": " + body);
            }
        }

        /** Drops the connection once {@code bytes} more body bytes were read: a reset if {@code reset}, else a FIN. */
        void dropAfter(long bytes, boolean reset) {
            this.dropAt = bytesRead + bytes;
            this.resetOnDrop = reset;
        }

        /** True once this side dropped the connection. */
        boolean dropped() {
            return dropped;
        }

        /** The next whole event, or null once the body ended or this side dropped the connection. */
        @Nullable Event next() throws IOException {
            long seq = -1;
            String type = "message";
            String data = null;
            ByteArrayOutputStream line = new ByteArrayOutputStream(256);
            while (true) {
                int b = body();
                if (b < 0) {
                    return null;
                }
                if (b != '\n') {
                    line.write(b);
                    continue;
                }
                String text = line.toString(StandardCharsets.UTF_8);
                line.reset();
                if (text.isEmpty()) {
                    if (data != null) {
                        return new Event(seq, type, data);
                    }
                    continue;
                }
                if (text.startsWith(":")) {
                    continue;
                }
                int colon = text.indexOf(':');
                String field = colon < 0 ? text : text.substring(0, colon);
                String value = colon < 0 ? "" : text.substring(colon + 1);
                if (value.startsWith(" ")) {
                    value = value.substring(1);
                }
                switch (field) {
                    case "id" -> seq = Long.parseLong(value.strip());
                    case "event" -> type = value;
                    case "data" -> data = data == null ? value : data + "\n" + value;
                    default -> { }
                }
            }
        }

        /** One byte of the body (chunked framing removed), or -1 at its end. */
        private int body() throws IOException {
            if (ended) {
                return -1;
            }
            if (bytesRead >= dropAt) {
                drop();
                return -1;
            }
            if (chunked && chunkLeft == 0) {
                String size = line(raw);
                if (size.isEmpty()) {
                    size = line(raw);
                }
                if (size.isEmpty()) {
                    ended = true;
                    return -1;
                }
                int semicolon = size.indexOf(';');
                chunkLeft = Long.parseLong((semicolon < 0 ? size : size.substring(0, semicolon)).strip(), 16);
                if (chunkLeft == 0) {
                    ended = true;
                    return -1;
                }
            }
            int b = raw.read();
            if (b < 0) {
                ended = true;
                return -1;
            }
            bytesRead++;
            if (chunked && --chunkLeft == 0) {
                line(raw);
            }
            return b;
        }

        private void drop() throws IOException {
            dropped = true;
            ended = true;
            if (resetOnDrop) {
                socket.setSoLinger(true, 0);
            }
            socket.close();
        }

        private byte[] readRest() throws IOException {
            ByteArrayOutputStream rest = new ByteArrayOutputStream();
            int b;
            while ((b = body()) >= 0) {
                rest.write(b);
            }
            return rest.toByteArray();
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** A CRLF- or LF-terminated line of the HTTP head, without its terminator ("" at the end of the input). */
    private static String line(InputStream in) throws IOException {
        StringBuilder text = new StringBuilder();
        int b;
        while ((b = in.read()) >= 0 && b != '\n') {
            if (b != '\r') {
                text.append((char) b);
            }
        }
        return text.toString();
    }
}
