package dev.parley.bridge;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** A loopback TCP proxy in front of the Bridge whose open connections a test can cut; it logs request lines. */
final class CuttableProxy implements AutoCloseable {
    private static final Pattern REQUEST_LINE = Pattern.compile("(GET|POST|DELETE) \\S+ HTTP/1\\.1");
    private final ServerSocket server;
    private volatile int target;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final List<String> requestLines = new CopyOnWriteArrayList<>();

    CuttableProxy(int target) throws IOException {
        this.target = target;
        this.server = new ServerSocket();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread acceptor = new Thread(this::accept, "proxy-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    int port() {
        return server.getLocalPort();
    }

    /** Where new connections go from now on (a restarted Bridge listens on another port). */
    void target(int port) {
        this.target = port;
    }

    /** The request line of every request that came through ({@code GET /runs/r1/events?after=4 HTTP/1.1}). */
    List<String> requestLines() {
        return List.copyOf(requestLines);
    }

    /** Resets every open connection, as a dropped network would; new connections still go through. */
    void cutAll() {
        for (Socket socket : open) {
            try {
                socket.setSoLinger(true, 0);
                socket.close();
            } catch (IOException ignored) {
                // cut anyway
            }
        }
        open.clear();
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), target);
                open.add(client);
                open.add(upstream);
                pump(client, upstream, true);
                pump(upstream, client, false);
            } catch (IOException e) {
                return;
            }
        }
    }

    private void pump(Socket from, Socket to, boolean requests) {
        Thread thread = new Thread(() -> {
            byte[] buffer = new byte[8192];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                int read;
                while ((read = in.read(buffer)) > 0) {
                    if (requests) {
                        Matcher line = REQUEST_LINE.matcher(new String(buffer, 0, read, StandardCharsets.ISO_8859_1));
                        while (line.find()) {
                            requestLines.add(line.group());
                        }
                    }
                    out.write(buffer, 0, read);
                    out.flush();
                }
            } catch (IOException ignored) {
                // the other side closed or was cut
            } finally {
                try {
                    to.close();
                    from.close();
                } catch (IOException ignored) {
                    // closing
                }
            }
        }, "proxy-pump");
        thread.setDaemon(true);
        thread.start();
    }

    @Override
    public void close() throws IOException {
        server.close();
        cutAll();
    }
}
