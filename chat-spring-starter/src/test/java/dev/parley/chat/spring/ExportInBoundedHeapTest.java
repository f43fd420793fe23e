package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ThreadTouch;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import dev.parley.chat.testing.FreePorts;
import java.io.File;
import java.io.FilterInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A 10 000-message thread, and a thread of one answer of 9 000 tool results, are exported by a server whose
 * heap is smaller than either export: it can only succeed if the export is streamed, messages and steps alike.
 * The server runs in its own JVM ({@code -Xmx64m}, exiting on an OutOfMemoryError) on a SQLite file this test
 * fills through the store as the server starts. Each text is one long word, so that filling the search index
 * costs little.
 */
class ExportInBoundedHeapTest {
    private static final int RUNS = 5_000;
    private static final int MESSAGE_CHARS = 8_000;
    private static final long HEAP_BYTES = 64L << 20;
    private static final String OWNER = "exporter";
    private static final String THREAD = "big-thread";
    private static final String STEPS_THREAD = "long-answer";
    private static final int STEPS = 9_000;

    private static Process server;
    private static String base;
    private static Path log;

    @BeforeAll
    static void startServerOnABigThread() throws Exception {
        Path dir = Files.createDirectories(Paths.get("target", "export-heap-test"));
        Path db = dir.resolve("chat.db");
        for (String suffix : new String[] {"", "-wal", "-shm"}) {
            Files.deleteIfExists(Paths.get(db + suffix));
        }
        int port = FreePorts.outsideEphemeralRange();
        log = dir.resolve("server.log");
        try (JdbiChatStore store = JdbiChatStore.sqlite(db).build()) {
            String java = Paths.get(System.getProperty("java.home"), "bin", "java").toString();
            server = new ProcessBuilder(java, "-Xmx" + (HEAP_BYTES >> 20) + "m", "-XX:+ExitOnOutOfMemoryError",
                    "-cp", System.getProperty("java.class.path"), ExportServer.class.getName(),
                    "--server.port=" + port, "--spring.datasource.url=jdbc:sqlite:" + db.toAbsolutePath(),
                    "--parley.owner.mode=HEADER", "--spring.main.banner-mode=off")
                    .directory(new File(".")).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            fill(store);
        }
        base = "http://localhost:" + port + "/api/chat";
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (true) {
            assertThat(server.isAlive()).as("the server runs; see %s", log).isTrue();
            assertThat(System.nanoTime()).as("the server starts; see %s", log).isLessThan(deadline);
            try {
                if (get("/models").statusCode() == 200) {
                    break;
                }
            } catch (IOException notYet) {
                Thread.sleep(200);
            }
        }
    }

    /**
     * One thread of {@link #RUNS} turns, a user message and an answer each, every text {@link #MESSAGE_CHARS}
     * long; written while the server starts (the schema is there before it does).
     */
    private static void fill(JdbiChatStore store) {
        Instant start = Instant.parse("2026-01-01T00:00:00Z");
        store.createThread(new ChatThread(THREAD, OWNER, "A long one", null, null, null, ThreadStatus.ACTIVE, start,
                start));
        String filler = "x".repeat(MESSAGE_CHARS - 10);
        String parent = null;
        StoreBatch.Builder batch = StoreBatch.builder();
        for (int i = 0; i < RUNS; i++) {
            Instant at = start.plusSeconds(i);
            String run = "run-" + i;
            String user = "u-" + i;
            String answer = "a-" + i;
            batch.run(new Run(run, THREAD, OWNER, RunStatus.SUCCEEDED, user, answer, "q" + i, null, null, null,
                    Map.of(), at, at, at, null, null, null));
            batch.message(new UserMessage(user, THREAD, run, parent, MessageStatus.COMPLETED, at, i + " " + filler));
            batch.message(new AssistantMessage(answer, THREAD, run, user, MessageStatus.COMPLETED, at,
                    i + " " + filler, null, null));
            parent = answer;
            if (i % 250 == 249) {
                batch.touch(new ThreadTouch(THREAD, null, at, null, answer, null));
                store.write(batch.build());
                batch = StoreBatch.builder();
            }
        }
        fillOneLongAnswer(store, start, filler);
    }

    /** A thread of one question and its answer, which made {@link #STEPS} tool calls, each result {@link #MESSAGE_CHARS} long. */
    private static void fillOneLongAnswer(JdbiChatStore store, Instant at, String filler) {
        store.createThread(new ChatThread(STEPS_THREAD, OWNER, "A long answer", null, null, null, ThreadStatus.ACTIVE,
                at, at));
        store.write(StoreBatch.builder()
                .run(new Run("steps-run", STEPS_THREAD, OWNER, RunStatus.SUCCEEDED, "steps-u", "steps-a", "q", null,
                        null, null, Map.of(), at, at, at, null, null, null))
                .message(new UserMessage("steps-u", STEPS_THREAD, "steps-run", null, MessageStatus.COMPLETED, at, "go"))
                .message(new AssistantMessage("steps-a", STEPS_THREAD, "steps-run", "steps-u", MessageStatus.COMPLETED,
                        at, "done", null, null))
                .touch(new ThreadTouch(STEPS_THREAD, null, at, null, "steps-a", null))
                .build());
        StoreBatch.Builder batch = StoreBatch.builder();
        for (int i = 0; i < STEPS; i++) {
            batch.message(new ResultMessage("steps-r" + i, STEPS_THREAD, "steps-run", "steps-a", MessageStatus.COMPLETED,
                    at, "call-" + i, "lookup", i + " " + filler, false));
            if (i % 250 == 249) {
                store.write(batch.build());
                batch = StoreBatch.builder();
            }
        }
    }

    @AfterAll
    static void stopServer() throws InterruptedException {
        if (server != null) {
            server.destroy();
            if (!server.waitFor(20, TimeUnit.SECONDS)) {
                server.destroyForcibly();
            }
        }
    }

    private static HttpResponse<String> get(String path) throws IOException, InterruptedException {
        return HttpSupport.HTTP.send(request(path), HttpResponse.BodyHandlers.ofString());
    }

    private static HttpRequest request(String path) {
        return HttpRequest.newBuilder(URI.create(base + path)).timeout(Duration.ofMinutes(2))
                .header("X-Parley-Owner", OWNER).build();
    }

    /** Reads a stream to its end, counting its bytes. */
    static final class Counting extends FilterInputStream {
        long bytes;

        Counting(InputStream in) {
            super(in);
        }

        @Override
        public int read() throws IOException {
            int b = super.read();
            if (b >= 0) {
                bytes++;
            }
            return b;
        }

        @Override
        public int read(byte[] buffer, int offset, int length) throws IOException {
            int n = super.read(buffer, offset, length);
            if (n > 0) {
                bytes += n;
            }
            return n;
        }
    }

    @Test
    void theJsonExportOfEveryMessageIsLargerThanTheServersHeap() throws Exception {
        HttpResponse<InputStream> response = HttpSupport.HTTP.send(request("/sessions/" + THREAD + "/export?format=json"),
                HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.statusCode()).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Length")).as("streamed, not sized up front").isEmpty();
        int messages = 0;
        try (Counting body = new Counting(response.body());
                JsonParser json = new JsonFactory().createParser(body)) {
            assertThat(json.nextToken()).isEqualTo(JsonToken.START_OBJECT);
            while (json.nextToken() == JsonToken.FIELD_NAME) {
                String field = json.currentName();
                json.nextToken();
                if (field.equals("messages")) {
                    while (json.nextToken() == JsonToken.START_OBJECT) {
                        messages++;
                        json.skipChildren();
                    }
                } else {
                    json.skipChildren();
                }
            }
            assertThat(body.bytes).as("more than the server's heap holds").isGreaterThan(HEAP_BYTES);
        }
        assertThat(messages).isEqualTo(2 * RUNS);
        assertThat(server.isAlive()).as("no OutOfMemoryError; see %s", log).isTrue();
    }

    @Test
    void theMarkdownExportOfTheActiveBranchIsLargerThanTheServersHeap() throws Exception {
        HttpResponse<InputStream> response = HttpSupport.HTTP.send(
                request("/sessions/" + THREAD + "/export?format=markdown"), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.statusCode()).isEqualTo(200);
        long bytes;
        String tail;
        try (Counting body = new Counting(response.body())) {
            byte[] last = new byte[0];
            byte[] chunk = new byte[16 * 1024];
            int n;
            while ((n = body.read(chunk)) > 0) {
                byte[] joined = Arrays.copyOf(last, last.length + n);
                System.arraycopy(chunk, 0, joined, last.length, n);
                last = Arrays.copyOfRange(joined, Math.max(0, joined.length - 3 * MESSAGE_CHARS), joined.length);
            }
            bytes = body.bytes;
            tail = new String(last, StandardCharsets.UTF_8);
        }
        assertThat(bytes).isGreaterThan(HEAP_BYTES);
        assertThat(tail).as("the newest answer comes last").contains((RUNS - 1) + " xxx");
        assertThat(server.isAlive()).as("no OutOfMemoryError; see %s", log).isTrue();
    }

    @Test
    void theJsonExportOfAnAnswerWithMoreStepsThanTheServersHeapHoldsEveryStep() throws Exception {
        HttpResponse<InputStream> response = HttpSupport.HTTP.send(
                request("/sessions/" + STEPS_THREAD + "/export?format=json"), HttpResponse.BodyHandlers.ofInputStream());
        assertThat(response.statusCode()).isEqualTo(200);
        int steps = 0;
        String last = null;
        try (Counting body = new Counting(response.body());
                JsonParser json = new JsonFactory().createParser(body)) {
            while (json.nextToken() != null) {
                if (json.currentToken() == JsonToken.FIELD_NAME && json.currentName().equals("steps")) {
                    assertThat(json.nextToken()).isEqualTo(JsonToken.START_ARRAY);
                    while (json.nextToken() == JsonToken.START_OBJECT) {
                        steps++;
                        while (json.nextToken() != JsonToken.END_OBJECT) {
                            if (json.currentToken() == JsonToken.FIELD_NAME && json.currentName().equals("id")) {
                                last = json.nextTextValue();
                            } else {
                                json.skipChildren();
                            }
                        }
                    }
                }
            }
            assertThat(body.bytes).as("more than the server's heap holds").isGreaterThan(HEAP_BYTES);
        }
        assertThat(steps).isEqualTo(STEPS);
        assertThat(last).isEqualTo("steps-r" + (STEPS - 1));
        assertThat(server.isAlive()).as("no OutOfMemoryError; see %s", log).isTrue();
    }
}
