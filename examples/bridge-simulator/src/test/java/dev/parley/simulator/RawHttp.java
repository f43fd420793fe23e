package dev.parley.simulator;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * HTTP/1.1 over a plain socket, for requests no HTTP client library sends: any {@code Host}, any {@code Origin},
 * a {@code Content-Length} the body never reaches. Test helper; one request per connection.
 */
final class RawHttp implements AutoCloseable {
    /** A response: status, headers (lower-case names), body. */
    record Response(int status, Map<String, String> headers, String body) {
        String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    private final Socket socket;
    private final InputStream in;

    private RawHttp(Socket socket) throws IOException {
        this.socket = socket;
        this.in = socket.getInputStream();
    }

    /** Opens a connection to the simulator; reads time out after 5 s. */
    static RawHttp connect(BridgeSimulator simulator) throws IOException {
        Socket socket = new Socket("127.0.0.1", simulator.port());
        socket.setSoTimeout(5_000);
        return new RawHttp(socket);
    }

    /**
     * Sends a request head (the request line and each header line, without the blank line) and then
     * {@code body} as it is, whatever the head declared.
     */
    RawHttp send(String head, byte[] body) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write((head.strip() + "\r\n\r\n").getBytes(StandardCharsets.ISO_8859_1));
        out.write(body);
        out.flush();
        return this;
    }

    /** {@code method path} with {@code Host}, the given extra header lines, and a JSON-typed body unless null. */
    static String head(String method, String path, String host, String... headers) {
        StringBuilder head = new StringBuilder(method + " " + path + " HTTP/1.1\r\nHost: " + host + "\r\n");
        for (String header : headers) {
            head.append(header).append("\r\n");
        }
        return head.toString();
    }

    /** Reads one response with a {@code Content-Length} body (or none). */
    Response read() throws IOException {
        String head = readHead();
        String[] lines = head.split("\r\n");
        int status = Integer.parseInt(lines[0].split(" ")[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (int i = 1; i < lines.length; i++) {
            int colon = lines[i].indexOf(':');
            headers.put(lines[i].substring(0, colon).strip().toLowerCase(Locale.ROOT), lines[i].substring(colon + 1).strip());
        }
        int length = Integer.parseInt(headers.getOrDefault("content-length", "0"));
        byte[] body = in.readNBytes(length);
        return new Response(status, headers, new String(body, StandardCharsets.UTF_8));
    }

    /**
     * True if the server closed the connection (end of stream, or a reset) within the read timeout; false if
     * it kept it open and silent.
     */
    boolean closedByServer() throws IOException {
        try {
            return in.read() == -1;
        } catch (SocketTimeoutException open) {
            return false;
        } catch (SocketException reset) {
            return true;
        }
    }

    private String readHead() throws IOException {
        ByteArrayOutputStream head = new ByteArrayOutputStream();
        int matched = 0;
        byte[] end = {'\r', '\n', '\r', '\n'};
        while (matched < 4) {
            int b = in.read();
            if (b < 0) {
                throw new IOException("the connection ended before a response head: " + head);
            }
            head.write(b);
            matched = b == end[matched] ? matched + 1 : (b == '\r' ? 1 : 0);
        }
        return head.toString(StandardCharsets.ISO_8859_1).strip();
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
