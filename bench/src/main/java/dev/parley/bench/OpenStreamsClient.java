package dev.parley.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The client side of section 4, run in a JVM of its own (a process may hold only {@code ulimit -n} files,
 * and the server side needs one per connection too): a raw NIO client holding thousands of SSE streams
 * open on one thread. Commands on stdin: {@code OPEN k} opens k more streams (round-robin over the paths
 * in the file it was given) and answers {@code OPENED <ready> <failed>} once each new one has received the
 * response head and the replayed {@code input_requested} event (the clarify); {@code CLOSE} closes all and exits. After
 * that, each stream is only read (heartbeats) and never written.
 */
final class OpenStreamsClient {
    static final String MODE = "--open-streams-client";
    /** The stream writes {@code event:input_requested} (no space); the type name alone is enough. */
    private static final byte[] READY_MARK = "input_requested".getBytes(StandardCharsets.US_ASCII);
    /** Streams being set up at once: few, so that the server's request thread pool is not what is measured. */
    private static final int MAX_PENDING = 32;
    private static final long TIMEOUT_NANOS = 60_000_000_000L;

    private final String host;
    private final int port;
    private final List<String> paths;
    private final Selector selector;
    private final ConcurrentLinkedQueue<String> commands = new ConcurrentLinkedQueue<>();
    private final ByteBuffer readBuffer = ByteBuffer.allocateDirect(64 * 1024);
    private int next;
    private int ready;
    private int failed;
    private int toOpen;
    private int pending;

    private final class Conn {
        final SocketChannel channel;
        final ByteBuffer request;
        final long started = System.nanoTime();
        /** The last bytes seen before ready, to find the mark across reads. */
        final byte[] tail = new byte[READY_MARK.length + 64];
        int tailLength;
        boolean headOk;
        boolean isReady;

        Conn(SocketChannel channel, String path) {
            this.channel = channel;
            this.request = ByteBuffer.wrap(("GET " + path + " HTTP/1.1\r\nHost: " + host + ":" + port
                    + "\r\nAccept: text/event-stream\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
        }
    }

    private final List<Conn> open = new ArrayList<>();

    private OpenStreamsClient(String host, int port, List<String> paths) throws IOException {
        this.host = host;
        this.port = port;
        this.paths = paths;
        this.selector = Selector.open();
    }

    static void main(String[] args) throws Exception {
        OpenStreamsClient client = new OpenStreamsClient(args[1], Integer.parseInt(args[2]), Files.readAllLines(Path.of(args[3])));
        Thread stdin = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    client.commands.add(line.trim());
                    client.selector.wakeup();
                }
            } catch (IOException e) {
                // parent gone
            }
            client.commands.add("CLOSE");
            client.selector.wakeup();
        }, "stdin");
        stdin.setDaemon(true);
        stdin.start();
        client.loop();
    }

    private void loop() throws IOException {
        System.out.println("CLIENT READY");
        System.out.flush();
        while (true) {
            String command;
            while ((command = commands.poll()) != null) {
                if (command.startsWith("OPEN ")) {
                    toOpen += Integer.parseInt(command.substring(5).trim());
                } else if (command.equals("CLOSE")) {
                    for (Conn c : open) {
                        c.channel.close();
                    }
                    System.out.println("CLOSED");
                    System.out.flush();
                    return;
                }
            }
            while (toOpen > 0 && pending < MAX_PENDING) {
                connect();
            }
            selector.select(100);
            Iterator<SelectionKey> keys = selector.selectedKeys().iterator();
            while (keys.hasNext()) {
                SelectionKey key = keys.next();
                keys.remove();
                Conn c = (Conn) key.attachment();
                try {
                    handle(key, c);
                } catch (IOException e) {
                    fail(key, c);
                }
            }
            long now = System.nanoTime();
            for (SelectionKey key : selector.keys()) {
                Conn c = (Conn) key.attachment();
                if (c != null && !c.isReady && key.isValid() && now - c.started > TIMEOUT_NANOS) {
                    fail(key, c);
                }
            }
            if (toOpen == 0 && pending == 0 && (ready + failed) > 0 && reportDue) {
                System.out.println("OPENED " + ready + " " + failed);
                System.out.flush();
                reportDue = false;
            }
        }
    }

    private boolean reportDue;

    private void connect() throws IOException {
        toOpen--;
        pending++;
        reportDue = true;
        SocketChannel channel = SocketChannel.open();
        channel.configureBlocking(false);
        Conn c = new Conn(channel, paths.get(next++ % paths.size()));
        open.add(c);
        channel.connect(new InetSocketAddress(host, port));
        channel.register(selector, SelectionKey.OP_CONNECT, c);
    }

    private void handle(SelectionKey key, Conn c) throws IOException {
        if (key.isConnectable()) {
            c.channel.finishConnect();
            key.interestOps(SelectionKey.OP_WRITE);
            return;
        }
        if (key.isWritable()) {
            c.channel.write(c.request);
            if (!c.request.hasRemaining()) {
                key.interestOps(SelectionKey.OP_READ);
            }
            return;
        }
        if (key.isReadable()) {
            readBuffer.clear();
            int read = c.channel.read(readBuffer);
            if (read < 0) {
                fail(key, c);
                return;
            }
            if (c.isReady) {
                return;
            }
            readBuffer.flip();
            byte[] bytes = new byte[readBuffer.remaining()];
            readBuffer.get(bytes);
            if (!c.headOk) {
                String start = new String(bytes, 0, Math.min(bytes.length, 12), StandardCharsets.US_ASCII);
                if (!start.startsWith("HTTP/1.1 200")) {
                    fail(key, c);
                    return;
                }
                c.headOk = true;
            }
            if (contains(c, bytes)) {
                c.isReady = true;
                ready++;
                pending--;
            }
        }
    }

    /** Looks for the mark in the kept tail plus the new bytes; keeps the new tail. */
    private static boolean contains(Conn c, byte[] bytes) {
        byte[] joined = new byte[c.tailLength + bytes.length];
        System.arraycopy(c.tail, 0, joined, 0, c.tailLength);
        System.arraycopy(bytes, 0, joined, c.tailLength, bytes.length);
        outer:
        for (int i = 0; i + READY_MARK.length <= joined.length; i++) {
            for (int j = 0; j < READY_MARK.length; j++) {
                if (joined[i + j] != READY_MARK[j]) {
                    continue outer;
                }
            }
            return true;
        }
        int keep = Math.min(c.tail.length, joined.length);
        System.arraycopy(joined, joined.length - keep, c.tail, 0, keep);
        c.tailLength = keep;
        return false;
    }

    private void fail(SelectionKey key, Conn c) {
        key.cancel();
        try {
            c.channel.close();
        } catch (IOException e) {
            // closing anyway
        }
        if (c.isReady) {
            ready--;
        } else {
            pending--;
        }
        failed++;
        reportDue = true;
    }
}
