package dev.parley.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.ConversationHistory;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.BuildTools;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A person's files through a {@code ChatEngine}, the real {@link HermesRuntimeAdapter} and the reference Bridge
 * (a child process over the stand-in Hermes, whose model log shows what the turn sent): images reach the model as
 * {@code image_url} parts, every file lands in the conversation's working directory and is named in the message,
 * and deleting the thread removes them.
 */
class ReferenceBridgeAttachmentsTest {
    static final byte[] PNG = bytes(new byte[] {(byte) 0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A}, 600);
    static final byte[] PDF = "%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n".getBytes(StandardCharsets.US_ASCII);

    private Path work;
    private Path modelLog;
    private BridgeProcess bridge;
    private HermesRuntimeAdapter adapter;

    static byte[] bytes(byte[] head, int size) {
        byte[] bytes = new byte[size];
        for (int i = 0; i < size; i++) {
            bytes[i] = (byte) (i * 31 + 7);
        }
        System.arraycopy(head, 0, bytes, 0, head.length);
        return bytes;
    }

    @BeforeAll
    static void needsPython() {
        BuildTools.assumePresent("python");
    }

    @BeforeEach
    void start() throws Exception {
        work = Files.createDirectories(Path.of(System.getProperty("bridge.work", "target/bridge-it"))
                .resolve("files-" + System.nanoTime()));
        modelLog = work.resolve("model-requests.jsonl");
        bridge = BridgeProcess.overStandIn(work, Map.of("HERMES_STANDIN_MODEL_LOG", modelLog.toString())).start();
        adapter = new HermesRuntimeAdapter(HermesConfig.builder().baseUrl("http://127.0.0.1:" + bridge.port())
                .bearerToken(BridgeProcess.TOKEN).idleTimeout(Duration.ofSeconds(5)).build());
    }

    @AfterEach
    void stop() throws Exception {
        adapter.close();
        bridge.stop();
        assertThat(bridge.stdout()).as("the Bridge writes nothing to stdout").isEmpty();
        assertThat(bridge.log()).doesNotContain(BridgeProcess.TOKEN)
                .doesNotContain(Base64.getEncoder().encodeToString(PNG).substring(0, 60));
    }

    @Test
    void anImageReachesTheModelAsAPartAndAPdfLandsInTheWorkingDirectoryNamedInTheMessage() throws Exception {
        try (ChatEngine engine = ChatEngine.builder().store(new InMemoryChatStore()).runtime(adapter).build()) {
            String thread = engine.createThread("alice", NewThread.empty()).id();
            List<String> files = List.of(upload(engine, thread, "cat.png", PNG), upload(engine, thread, "report.pdf", PDF));

            Run run = await(engine, engine.startRun("alice", thread, StartRun.of("turn: what are these?")
                    .withAttachments(files)));

            assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
            Path pdf = saved("report.pdf");
            assertThat(pdf).hasBinaryContent(PDF);
            assertThat(saved("cat.png")).hasBinaryContent(PNG);
            JsonNode content = lastUserContent(run.id());
            assertThat(content.isArray()).as("the message went to Hermes as parts: %s", content).isTrue();
            assertThat(content).hasSize(2);
            assertThat(content.get(1).path("type").asText()).isEqualTo("image_url");
            assertThat(content.get(1).path("image_url").path("url").asText())
                    .isEqualTo("data:image/png;base64," + Base64.getEncoder().encodeToString(PNG));
            assertThat(content.get(0).path("text").asText()).isEqualTo("turn: what are these?\n\n"
                    + "[image: cat.png (image/png, " + PNG.length + " bytes), saved as " + saved("cat.png") + "]\n"
                    + "[file: report.pdf (application/pdf, " + PDF.length + " bytes), saved as " + pdf + "]");

            RunTicket next = engine.startRun("alice", thread, StartRun.of("turn: and now?"));
            assertThat(await(engine, next).status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(lastUserContent(next.runId()).asText()).isEqualTo("turn: and now?");
            assertThat(Files.readString(modelLog)).as("the image went to the model once")
                    .containsOnlyOnce(Base64.getEncoder().encodeToString(PNG));

            engine.deleteThread("alice", thread);
            long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            while (Files.exists(pdf) && System.nanoTime() < deadline) {
                Thread.sleep(50);
            }
            assertThat(pdf).as("deleting the thread removed its files").doesNotExist();
        }
    }

    /**
     * A path given as a file's name (the Bridge refuses it: its Python tests show that over raw HTTP) reaches the
     * Bridge as a plain name from the adapter, and is written inside the conversation's working directory.
     */
    @Test
    void aPathGivenAsANameIsWrittenAsAPlainFileInTheWorkingDirectory() throws Exception {
        MessageAttachment passwd = new MessageAttachment("f1", "../../etc/passwd", "text/plain", 11);
        RunRequest request = new RunRequest("thread-bad", "run-bad", "alice", "run-bad:answer", "turn: read it", null, null,
                null, null, List.of(), Map.of(), ConversationHistory.empty()).withAttachments(List.of(passwd),
                file -> new ByteArrayInputStream("root:x:0:0\n".getBytes(StandardCharsets.US_ASCII)));

        List<AgentStreamEvent> events = Events.of(adapter.generateResponse(request)).all();

        assertThat(events).last().isInstanceOf(AgentStreamEvent.RunFinished.class);
        Path written = saved("___.._etc_passwd");
        assertThat(written.toRealPath()).startsWith(work.resolve("work").toRealPath());
        assertThat(writtenFiles()).containsExactly(written);
    }

    @Test
    void filesPastTheBridgesLimitFailTheRunBeforeTheyAreSent() throws Exception {
        long tooMany = 25L * 1024 * 1024 + 1;
        MessageAttachment huge = new MessageAttachment("f1", "huge.bin", "application/octet-stream", tooMany);
        RunRequest request = new RunRequest("thread-big", "run-big", "alice", "run-big:answer", "turn: look", null, null,
                null, null, List.of(), Map.of(), ConversationHistory.empty()).withAttachments(List.of(huge), file -> {
                    throw new AssertionError("a file past the Bridge's limit is not even read");
                });

        List<AgentStreamEvent> events = Events.of(adapter.generateResponse(request)).all();

        assertThat(events).singleElement().isInstanceOfSatisfying(AgentStreamEvent.RunFailed.class, failed -> {
            assertThat(failed.code()).isEqualTo("TOO_LARGE");
            assertThat(failed.message()).contains(tooMany + " bytes").contains("at most 26214400 bytes per message");
        });
        assertThat(writtenFiles()).isEmpty();
        assertThat(adapter.health().detail()).contains("attachments: */*; at most 10 files, 26214400 bytes per message");
    }

    private static String upload(ChatEngine engine, String thread, String name, byte[] content) {
        return engine.attachments().upload("alice", thread, name, null, new ByteArrayInputStream(content)).id();
    }

    private static Run await(ChatEngine engine, RunTicket ticket) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        Run run = engine.state("alice", ticket.runId()).run();
        while (!run.status().isTerminal()) {
            assertThat(System.nanoTime()).as("run %s ends in time", ticket.runId()).isLessThan(deadline);
            Thread.sleep(50);
            run = engine.state("alice", ticket.runId()).run();
        }
        return run;
    }

    /** The file the Bridge saved under this name in the (one) conversation's working directory. */
    private Path saved(String name) throws Exception {
        List<Path> found = writtenFiles().stream().filter(p -> p.getFileName().toString().equals(name)).toList();
        assertThat(found).as("%s saved once", name).hasSize(1);
        return found.get(0);
    }

    private List<Path> writtenFiles() throws Exception {
        Path root = work.resolve("work");
        if (!Files.exists(root)) {
            return List.of();
        }
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(Files::isRegularFile).toList();
        }
    }

    /** The content of the last user message of the stand-in model's last request for the run. */
    private JsonNode lastUserContent(String runId) throws Exception {
        ObjectMapper json = new ObjectMapper();
        List<JsonNode> requests = new ArrayList<>();
        for (String line : Files.readAllLines(modelLog)) {
            JsonNode request = json.readTree(line);
            if (request.path("task_id").asText().equals(runId)) {
                requests.add(request);
            }
        }
        assertThat(requests).as("the model was asked for run %s", runId).isNotEmpty();
        JsonNode content = null;
        for (JsonNode message : requests.get(requests.size() - 1).path("messages")) {
            if (message.path("role").asText().equals("user")) {
                content = message.path("content");
            }
        }
        return content;
    }
}
