package dev.parley.bench;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.RequestBody;
import okhttp3.Response;
import okhttp3.sse.EventSource;
import okhttp3.sse.EventSourceListener;
import okhttp3.sse.EventSources;

/**
 * The naive peer: an agent chat backend written the straightforward way, for comparison on the same workload.
 * <ul>
 *   <li>a run is a task on an executor that calls the Bridge and, for every frame, calls the sink: the sink
 *       parses the frame, builds the event, {@code INSERT}s it in auto-commit (one commit per event) and
 *       publishes it on the {@code SseEventBus} (and keeps it in the run's log list for the final
 *       {@code logs_json});</li>
 *   <li>the {@code SseEventBus} keeps every run's events in memory (for {@code lastEventId} replay) and, per
 *       subscriber, an emitter with a thread of its own that takes from its queue and sends (serialising the
 *       event for that emitter, as {@code SseEmitter.send(object)} does);</li>
 *   <li>at the end, {@code UPDATE chat_message SET status, content, logs_json}.</li>
 * </ul>
 * The database is a SQLite file with the same durability settings as Parley's store (WAL, synchronous=FULL),
 * one connection shared by all runs (SQLite has one writer).
 */
final class NaivePeer implements AutoCloseable {
    /** One event on the bus: its id (the frame's seq), type, the event object, and the frame's tsMicros. */
    record BusEvent(long id, String type, Map<String, Object> data, long tsMicros) {
    }

    private final ObjectMapper mapper = new ObjectMapper();
    private final String bridgeUrl;
    private final OkHttpClient http = new OkHttpClient.Builder().readTimeout(120, TimeUnit.SECONDS).build();
    private final ExecutorService executor = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "naive-run");
        t.setDaemon(true);
        return t;
    });
    private final Connection db;
    private final Map<String, Channel> channels = new ConcurrentHashMap<>();

    NaivePeer(String bridgeUrl, Path sqliteFile) throws SQLException {
        this.bridgeUrl = bridgeUrl;
        this.db = Databases.sqliteConnection(sqliteFile);
        try (Statement s = db.createStatement()) {
            s.execute("CREATE TABLE IF NOT EXISTS chat_message (id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT, role TEXT, "
                    + "content TEXT, status TEXT, logs_json TEXT, created_at INTEGER, completed_at INTEGER)");
            s.execute("CREATE TABLE IF NOT EXISTS run_event (run_id TEXT NOT NULL, seq INTEGER NOT NULL, type TEXT NOT NULL, "
                    + "payload TEXT NOT NULL, created_at INTEGER NOT NULL, PRIMARY KEY (run_id, seq))");
        }
    }

    // ------------------------------------------------------------------ SseEventBus

    private static final class Channel {
        final List<BusEvent> history = new ArrayList<>();
        final List<Emitter> emitters = new CopyOnWriteArrayList<>();
    }

    /** A subscriber: an emitter with its own thread. */
    final class Emitter implements Runnable {
        private final BlockingQueue<BusEvent> queue = new LinkedBlockingQueue<>();
        private final Consumer<BusEvent> client;
        private final Thread thread;
        private volatile boolean done;

        Emitter(Consumer<BusEvent> client) {
            this.client = client;
            this.thread = new Thread(this, "naive-emitter");
            this.thread.setDaemon(true);
        }

        @Override
        public void run() {
            try {
                while (!done) {
                    BusEvent event = queue.take();
                    // SseEmitter.send(object): each emitter writes the object with the message converter
                    String json = mapper.writeValueAsString(event.data());
                    if (json.isEmpty()) {
                        throw new IllegalStateException();
                    }
                    client.accept(event);
                    if (event.type().equals("workflow_complete") || event.type().equals("workflow_error")) {
                        done = true;
                    }
                }
            } catch (InterruptedException | IOException e) {
                done = true;
            }
        }
    }

    void register(String runId) {
        channels.put(runId, new Channel());
    }

    void publish(String runId, BusEvent event) {
        Channel channel = channels.get(runId);
        synchronized (channel) {
            channel.history.add(event);
            for (Emitter emitter : channel.emitters) {
                emitter.queue.offer(event);
            }
        }
    }

    /** Subscribes after {@code lastEventId}: the missed events from the history, then live. */
    Emitter subscribe(String runId, long lastEventId, Consumer<BusEvent> client) {
        Channel channel = channels.get(runId);
        Emitter emitter = new Emitter(client);
        synchronized (channel) {
            for (BusEvent e : channel.history) {
                if (e.id() > lastEventId) {
                    emitter.queue.offer(e);
                }
            }
            channel.emitters.add(emitter);
        }
        emitter.thread.start();
        return emitter;
    }

    // ------------------------------------------------------------------ ChatRunService.startRun

    String startRun(String userMessage) throws SQLException {
        String runId = UUID.randomUUID().toString();
        register(runId);
        synchronized (db) {
            try (PreparedStatement insert = db.prepareStatement(
                    "INSERT INTO chat_message (run_id, role, content, status, created_at) VALUES (?, 'ASSISTANT', '', 'RUNNING', ?)")) {
                insert.setString(1, runId);
                insert.setLong(2, System.currentTimeMillis());
                insert.executeUpdate();
            }
        }
        executor.submit(() -> runBridge(runId, userMessage));
        return runId;
    }

    private void runBridge(String runId, String userMessage) {
        List<Map<String, Object>> logs = new ArrayList<>();
        StringBuilder finalText = new StringBuilder();
        try {
            String body = "{\"runId\":\"" + runId + "\",\"userMessage\":" + Env.jsonString(userMessage) + "}";
            Request request = new Request.Builder().url(bridgeUrl + "/run").header("Accept", "text/event-stream")
                    .post(RequestBody.create(body, Env.JSON_TYPE)).build();
            PreparedStatement insert;
            synchronized (db) {
                insert = db.prepareStatement("INSERT INTO run_event (run_id, seq, type, payload, created_at) VALUES (?, ?, ?, ?, ?)");
            }
            try (Response response = http.newCall(request).execute()) {
                EventSources.processResponse(response, new EventSourceListener() {
                    @Override
                    public void onEvent(EventSource source, String id, String type, String data) {
                        try {
                            JsonNode frame = mapper.readTree(data);
                            String kind = frame.path("kind").asText();
                            long seq = frame.path("seq").asLong();
                            long ts = frame.path("tsMicros").asLong();
                            if (kind.equals("done")) {
                                return;
                            }
                            if (kind.equals("final")) {
                                finalText.append(frame.path("text").asText());
                            }
                            // WorkflowRunEvent.nodeStream(runId, "agent", kind, content, toolName)
                            Map<String, Object> event = new LinkedHashMap<>();
                            event.put("type", "node_stream");
                            event.put("runId", runId);
                            event.put("nodeId", "agent");
                            event.put("kind", kind);
                            event.put("content", frame.path("text").asText(""));
                            event.put("toolName", frame.path("toolName").asText(null));
                            event.put("timestamp", System.currentTimeMillis());
                            BusEvent busEvent = new BusEvent(seq, "node_stream", event, ts);
                            publish(runId, busEvent);
                            logs.add(event);
                            String payload = mapper.writeValueAsString(event);
                            synchronized (db) {
                                insert.setString(1, runId);
                                insert.setLong(2, seq);
                                insert.setString(3, kind);
                                insert.setString(4, payload);
                                insert.setLong(5, System.currentTimeMillis());
                                insert.executeUpdate();
                            }
                        } catch (IOException | SQLException e) {
                            throw new IllegalStateException(e);
                        }
                    }
                });
            } finally {
                synchronized (db) {
                    insert.close();
                }
            }
            synchronized (db) {
                try (PreparedStatement update = db.prepareStatement("UPDATE chat_message SET status = 'SUCCESS', content = ?, "
                        + "logs_json = ?, completed_at = ? WHERE run_id = ?")) {
                    update.setString(1, finalText.toString());
                    update.setString(2, mapper.writeValueAsString(logs));
                    update.setLong(3, System.currentTimeMillis());
                    update.setString(4, runId);
                    update.executeUpdate();
                }
            }
            Map<String, Object> complete = new LinkedHashMap<>();
            complete.put("type", "workflow_complete");
            complete.put("runId", runId);
            publish(runId, new BusEvent(Long.MAX_VALUE, "workflow_complete", complete, 0));
        } catch (Exception e) {
            Map<String, Object> error = new LinkedHashMap<>();
            error.put("type", "workflow_error");
            error.put("message", String.valueOf(e));
            publish(runId, new BusEvent(Long.MAX_VALUE, "workflow_error", error, 0));
        }
    }

    @Override
    public void close() throws SQLException {
        executor.shutdownNow();
        http.dispatcher().executorService().shutdown();
        http.connectionPool().evictAll();
        synchronized (db) {
            db.close();
        }
    }
}
