package dev.parley.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.json.ChatJson;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A Hermes Bridge (protocol v1, docs/hermes-bridge-protocol.md) on a bare loopback socket that plays one
 * scripted answer per run and breaks it as the run's user message says: {@code fault=RESET point=7
 * deltas=12}. The fault hits the first stream of the run; re-attaching ({@code GET /runs/{id}/events})
 * then works, unless the fault says it does not. {@link #down()} closes the listening socket (connection
 * refused) and {@link #up()} opens it again on the same port.
 */
final class FaultBridge implements AutoCloseable {
    /** What goes wrong, and where. */
    enum Fault {
        NONE, REFUSED, RESET, RESET_LOST, STALL, MALFORMED, UNKNOWN_KIND, HTTP_500, HTTP_503, TRUNCATED,
        TRUNCATED_ALWAYS, SESSION_BUSY, FRAGMENTED, SLOW_READER
    }

    /** One run's plan: the fault, the frame index it hits ({@code point}), and how many text deltas there are. */
    record Plan(Fault fault, int point, int deltas) {
        private static final Pattern FORMAT = Pattern.compile("fault=(\\w+) point=(\\d+) deltas=(\\d+)");

        String message() {
            return "fault=" + fault + " point=" + point + " deltas=" + deltas;
        }

        static Plan parse(String message) {
            Matcher m = FORMAT.matcher(message);
            if (!m.find()) {
                return new Plan(Fault.NONE, 0, 3);
            }
            return new Plan(Fault.valueOf(m.group(1)), Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)));
        }

        /** The text the deltas add up to. */
        String text() {
            StringBuilder text = new StringBuilder();
            for (int i = 0; i < deltas; i++) {
                text.append(delta(i));
            }
            return text.toString();
        }

        /** The text of the deltas among the first {@code frames} frames of the run's log. */
        String textBefore(int frames) {
            StringBuilder text = new StringBuilder();
            List<String> kinds = kinds();
            int delta = 0;
            for (int i = 0; i < Math.min(frames, kinds.size()); i++) {
                if (kinds.get(i).equals("text_delta")) {
                    text.append(delta(delta++));
                }
            }
            return text.toString();
        }

        /** The kinds of the run's frames, in order (seq 1 first). */
        List<String> kinds() {
            List<String> kinds = new ArrayList<>(List.of("run_started", "status", "thinking"));
            for (int i = 0; i < deltas; i++) {
                kinds.add("text_delta");
            }
            kinds.addAll(List.of("usage", "final", "done"));
            if (fault == Fault.UNKNOWN_KIND) {
                kinds.add(point, "sparkle");
            }
            return kinds;
        }

        static String delta(int i) {
            return "w" + i + "·é ";
        }
    }

    private static final ChatJson JSON = ChatJson.shared();
    private final ExecutorService connections = Executors.newCachedThreadPool(r -> {
        Thread thread = new Thread(r, "fault-bridge");
        thread.setDaemon(true);
        return thread;
    });
    private final Map<String, List<String>> logs = new ConcurrentHashMap<>();
    private final Map<String, Plan> plans = new ConcurrentHashMap<>();
    private final Random jitter;
    private final int port;
    private volatile ServerSocket server;

    FaultBridge(long seed) throws IOException {
        this.jitter = new Random(seed);
        this.server = bind(0);
        this.port = server.getLocalPort();
        accept(server);
    }

    String baseUrl() {
        return "http://127.0.0.1:" + port;
    }

    /** Closes the listening socket: new connections are refused. */
    void down() throws IOException {
        server.close();
    }

    /** Listens again on the same port. */
    void up() throws IOException {
        server = bind(port);
        accept(server);
    }

    private static ServerSocket bind(int port) throws IOException {
        ServerSocket socket = new ServerSocket();
        socket.setReuseAddress(true);
        socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 200);
        return socket;
    }

    private void accept(ServerSocket listening) {
        Thread acceptor = new Thread(() -> {
            while (!listening.isClosed()) {
                try {
                    Socket socket = listening.accept();
                    connections.execute(() -> serve(socket));
                } catch (IOException closed) {
                    return;
                }
            }
        }, "fault-bridge-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private void serve(Socket socket) {
        try (socket) {
            InputStream in = new BufferedInputStream(socket.getInputStream());
            String line = head(in);
            int length = 0;
            String header;
            while (!(header = head(in)).isEmpty()) {
                if (header.toLowerCase(Locale.ROOT).startsWith("content-length:")) {
                    length = Integer.parseInt(header.substring(15).strip());
                }
            }
            String body = new String(in.readNBytes(length), StandardCharsets.UTF_8);
            OutputStream out = socket.getOutputStream();
            String[] parts = line.split(" ");
            route(parts[0], parts[1], body, socket, in, out);
        } catch (IOException | RuntimeException | InterruptedException gone) {
            // the client left, or a fault closed the connection
        }
    }

    private void route(String method, String target, String body, Socket socket, InputStream in, OutputStream out)
            throws IOException, InterruptedException {
        String path = target.contains("?") ? target.substring(0, target.indexOf('?')) : target;
        if (method.equals("POST") && path.equals("/run")) {
            JsonNode request = JSON.readTree(body);
            String runId = request.get("runId").asText();
            Plan plan = Plan.parse(request.get("userMessage").asText());
            plans.put(runId, plan);
            List<String> log = frames(runId, plan);
            logs.put(runId, log);
            firstStream(plan, log, socket, in, out);
            return;
        }
        String[] segments = path.split("/");
        String runId = segments.length > 2 ? segments[2] : "";
        Plan plan = plans.get(runId);
        List<String> log = logs.get(runId);
        if (plan == null || log == null || plan.fault() == Fault.RESET_LOST) {
            json(out, 404, "{\"error\":{\"code\":\"RUN_NOT_FOUND\",\"message\":\"no run " + runId + "\",\"retryable\":false}}");
        } else if (method.equals("GET") && segments.length == 3) {
            json(out, 200, "{\"runId\":\"" + runId + "\",\"status\":\"running\",\"lastSeq\":" + log.size() + "}");
        } else if (method.equals("GET") && path.endsWith("/events")) {
            int after = Integer.parseInt(target.replaceAll(".*after=(\\d+).*", "$1"));
            streamHead(out);
            if (plan.fault() != Fault.TRUNCATED_ALWAYS) {
                for (int seq = after + 1; seq <= log.size(); seq++) {
                    out.write(bytes(log.get(seq - 1)));
                }
            }
            out.flush();
        } else if (method.equals("POST") && path.endsWith("/cancel")) {
            json(out, 200, "{\"status\":\"cancelled\"}");
        } else {
            json(out, 404, "{\"error\":{\"code\":\"RUN_NOT_FOUND\",\"message\":\"no route\",\"retryable\":false}}");
        }
    }

    /** The answer to {@code POST /run}: the run's frames, broken as planned. */
    private void firstStream(Plan plan, List<String> log, Socket socket, InputStream in, OutputStream out)
            throws IOException, InterruptedException {
        switch (plan.fault()) {
            case HTTP_500 -> json(out, 500, "{\"error\":{\"code\":\"INTERNAL\",\"message\":\"the Bridge failed (injected)\","
                    + "\"retryable\":false}}");
            case HTTP_503 -> raw(out, 503, "text/html", "<html>Service Unavailable</html>");
            case SESSION_BUSY -> json(out, 409, "{\"error\":{\"code\":\"SESSION_BUSY\",\"message\":\"the session has an "
                    + "active run (injected)\",\"retryable\":true}}");
            case RESET, RESET_LOST -> {
                streamHead(out);
                writeFrames(out, log, plan.point());
                Thread.sleep(30);
                socket.setSoLinger(true, 0);
                socket.close();
            }
            case STALL -> {
                streamHead(out);
                writeFrames(out, log, plan.point());
                socket.setSoTimeout(30_000);
                try {
                    while (in.read() >= 0) {
                        continue;
                    }
                } catch (SocketException | java.net.SocketTimeoutException gone) {
                    // the client gave up on the silent stream
                }
            }
            case TRUNCATED, TRUNCATED_ALWAYS -> {
                streamHead(out);
                writeFrames(out, log, plan.point());
            }
            case MALFORMED -> {
                streamHead(out);
                writeFrames(out, log, plan.point());
                out.write(bytes("id: " + (plan.point() + 1) + "\nevent: text_delta\ndata: {\"runId\": oops, not json\n\n"));
                out.flush();
            }
            case FRAGMENTED -> {
                streamHead(out);
                byte[] all = bytes(String.join("", log));
                int at = 0;
                while (at < all.length) {
                    int piece;
                    synchronized (jitter) {
                        piece = 1 + jitter.nextInt(7);
                    }
                    out.write(all, at, Math.min(piece, all.length - at));
                    out.flush();
                    at += piece;
                }
            }
            default -> {
                streamHead(out);
                writeFrames(out, log, log.size());
            }
        }
    }

    private static void writeFrames(OutputStream out, List<String> log, int count) throws IOException {
        for (int i = 0; i < Math.min(count, log.size()); i++) {
            out.write(bytes(log.get(i)));
        }
        out.flush();
    }

    /** The run's whole log as SSE frames, seq 1 first. */
    private static List<String> frames(String runId, Plan plan) {
        List<String> frames = new ArrayList<>();
        int delta = 0;
        for (String kind : plan.kinds()) {
            int seq = frames.size() + 1;
            long micros = System.currentTimeMillis() * 1000;
            ObjectNode data = JSON.objectNode().put("runId", runId).put("seq", seq).put("ts", micros / 1000)
                    .put("tsMicros", micros).put("kind", kind);
            switch (kind) {
                case "run_started" -> data.putNull("sessionId").put("hermesSessionId", "hs-" + runId)
                        .put("resumedSession", false);
                case "status" -> data.put("level", "lifecycle").put("text", "working (injected faults)");
                case "thinking" -> data.put("text", "Which fault is next? ");
                case "text_delta" -> data.put("text", Plan.delta(delta++));
                case "usage" -> data.put("inputTokens", 10).put("outputTokens", plan.deltas()).put("totalTokens",
                        10 + plan.deltas());
                case "final" -> data.put("text", plan.text());
                case "done" -> data.put("status", "completed").put("hermesSessionId", "hs-" + runId);
                default -> data.put("sparkles", 3);
            }
            frames.add("id: " + seq + "\nevent: " + kind + "\ndata: " + JSON.write(data) + "\n\n");
        }
        return frames;
    }

    private static void streamHead(OutputStream out) throws IOException {
        out.write(bytes("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"));
        out.flush();
    }

    private static void json(OutputStream out, int status, String json) throws IOException {
        raw(out, status, "application/json", json);
    }

    private static void raw(OutputStream out, int status, String type, String text) throws IOException {
        byte[] body = bytes(text);
        out.write(bytes("HTTP/1.1 " + status + " X\r\nContent-Type: " + type + "\r\nContent-Length: " + body.length
                + "\r\nConnection: close\r\n\r\n"));
        out.write(body);
        out.flush();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String head(InputStream in) throws IOException {
        StringBuilder text = new StringBuilder();
        int b;
        while ((b = in.read()) >= 0 && b != '\n') {
            if (b != '\r') {
                text.append((char) b);
            }
        }
        return text.toString();
    }

    @Override
    public void close() throws IOException {
        server.close();
        connections.shutdownNow();
    }
}
