package dev.parley.simulator;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.ConversationHistory;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import java.io.ByteArrayInputStream;
import dev.parley.chat.testing.StreamCollector;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The attachments addition (protocol section 13): what {@code /health} says, the files reaching the simulated
 * agent through a {@code ChatEngine} and the real Hermes adapter (default {@link HermesConfig}: any file, checked
 * against {@code /health}), and the refusals of {@code POST /run}, before anything starts.
 */
class AttachmentsTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String TOKEN = "bridge-token-attachments";
    private static final String ALICE = "alice";
    private static final byte[] PNG = bytes(new byte[] {(byte) 0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A}, 1234);
    private static final byte[] PDF = "%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\n%%EOF\n"
            .getBytes(StandardCharsets.US_ASCII);

    private final HttpClient http = HttpClient.newHttpClient();
    private final ChatStore store = new InMemoryChatStore();
    private BridgeSimulator simulator;
    private HermesRuntimeAdapter adapter;

    @BeforeEach
    void start() throws Exception {
        simulator = BridgeSimulator.start(SimulatorConfig.builder().bearerToken(TOKEN).build());
        adapter = new HermesRuntimeAdapter(HermesConfig.builder().baseUrl(simulator.baseUrl()).bearerToken(TOKEN)
                .idleTimeout(Duration.ofSeconds(5)).build());
    }

    @AfterEach
    void stop() {
        adapter.close();
        simulator.close();
    }

    @Test
    void healthListsTheCapabilityWithTheReferenceBridgesDefaults() throws Exception {
        JsonNode health = JSON.readTree(http.send(HttpRequest.newBuilder(URI.create(simulator.baseUrl() + "/health"))
                .build(), HttpResponse.BodyHandlers.ofString()).body());

        assertThat(health.path("capabilities")).extracting(JsonNode::asText).contains("attachments");
        assertThat(health.path("attachments")).isEqualTo(JSON.readTree("{\"mediaTypes\":[\"*/*\"],"
                + "\"imageTypes\":[\"image/png\",\"image/jpeg\",\"image/gif\",\"image/webp\"],"
                + "\"maxBytes\":26214400,\"maxFiles\":10}"));
        assertThat(adapter.health().detail()).contains("attachments: */*; at most 10 files, 26214400 bytes per message");
    }

    @Test
    void anImageAndAPdfReachTheAgentWhichNamesThemAtTheStartOfItsAnswer() throws Exception {
        try (ChatEngine engine = ChatEngine.builder().store(store).runtime(adapter).build()) {
            String thread = engine.createThread(ALICE, NewThread.empty()).id();
            List<String> files = List.of(upload(engine, thread, "cat.png", PNG), upload(engine, thread, "report.pdf", PDF));

            RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("what are these?").withAttachments(files));
            Run run = awaitEnd(engine, ticket);

            assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
            String received = "Received cat.png (image/png, 1234 bytes, sha256 " + sha256(PNG).substring(0, 12) + ")\n"
                    + "Received report.pdf (application/pdf, " + PDF.length + " bytes, sha256 "
                    + sha256(PDF).substring(0, 12) + ")\n\n";
            assertThat(answer(ticket)).startsWith(received + "### Simulated answer").contains("> what are these?");
            assertThat(simulator.request(ticket.runId()).orElseThrow().attachments()).containsExactly(
                    new ReceivedFile("cat.png", "image/png", PNG.length, sha256(PNG)),
                    new ReceivedFile("report.pdf", "application/pdf", PDF.length, sha256(PDF)));

            RunTicket tools = engine.startRun(ALICE, thread, StartRun.of("please use the tools")
                    .withAttachments(List.of(upload(engine, thread, "notes.pdf", PDF))));
            assertThat(awaitEnd(engine, tools).status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(answer(tools)).as("any scenario names the files").startsWith("Received notes.pdf (application/pdf, "
                    + PDF.length + " bytes, sha256 " + sha256(PDF).substring(0, 12) + ")\n\nBased on **the guide**");

            RunTicket plain = engine.startRun(ALICE, thread, StartRun.of("and without files?"));
            assertThat(awaitEnd(engine, plain).status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(answer(plain)).startsWith("### Simulated answer");
            assertThat(simulator.request(plain.runId()).orElseThrow().attachments()).isEmpty();
        }
    }

    /**
     * Names Parley keeps that the Bridge protocol refuses reach the Bridge repaired, so the run does not fail: a
     * long name in a script of three bytes a character (Parley keeps 200 characters, the Bridge 255 bytes) and a
     * Unicode space at the start.
     */
    @Test
    void filesWhoseNamesTheBridgeRefusesArriveUnderRepairedNames() throws Exception {
        try (ChatEngine engine = ChatEngine.builder().store(store).runtime(adapter).build()) {
            String thread = engine.createThread(ALICE, NewThread.empty()).id();
            String longName = "報".repeat(150) + ".pdf";
            List<String> files = List.of(upload(engine, thread, longName, PDF), upload(engine, thread, "\u2003notes.pdf", PDF));

            RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("what are these?").withAttachments(files));

            assertThat(awaitEnd(engine, ticket).status()).isEqualTo(RunStatus.SUCCEEDED);
            List<String> received = simulator.request(ticket.runId()).orElseThrow().attachments().stream()
                    .map(ReceivedFile::name).toList();
            assertThat(received.get(0)).isEqualTo("報".repeat(83) + ".pdf");
            assertThat(received.get(1)).isEqualTo("_notes.pdf");
            assertThat(answer(ticket)).contains("Received _notes.pdf (application/pdf, " + PDF.length + " bytes");
        }
    }

    @Test
    void theStreamedAnswerIsTheFinalTextForTheAdapter() throws Exception {
        RunRequest request = request("run-stream", "long 5").withAttachments(
                List.of(new MessageAttachment("f1", "cat.png", "image/png", PNG.length)), file -> new ByteArrayInputStream(PNG));

        List<AgentStreamEvent> events = events(request);

        String deltas = events.stream().filter(AgentStreamEvent.TextDelta.class::isInstance)
                .map(e -> ((AgentStreamEvent.TextDelta) e).delta()).reduce("", String::concat);
        AgentStreamEvent.TextFinal last = events.stream().filter(AgentStreamEvent.TextFinal.class::isInstance)
                .map(AgentStreamEvent.TextFinal.class::cast).reduce((a, b) -> b).orElseThrow();
        assertThat(last.text()).isEqualTo(deltas)
                .isEqualTo("Received cat.png (image/png, 1234 bytes, sha256 " + sha256(PNG).substring(0, 12) + ")\n\n"
                        + "t0 t1 t2 t3 t4 ");
    }

    /** A path given as a file's name never reaches the Bridge as one (the Bridge would refuse it: see below). */
    @Test
    void aPathGivenAsANameReachesTheBridgeAsAPlainName() throws Exception {
        MessageAttachment passwd = new MessageAttachment("f1", "../../etc/passwd", "text/plain", 11);
        RunRequest request = request("run-path", "read it").withAttachments(List.of(passwd),
                file -> new ByteArrayInputStream("root:x:0:0\n".getBytes(StandardCharsets.US_ASCII)));

        assertThat(events(request)).last().isInstanceOf(AgentStreamEvent.RunFinished.class);
        assertThat(simulator.request("run-path").orElseThrow().attachments()).extracting(ReceivedFile::name)
                .containsExactly("___.._etc_passwd");
    }

    @Test
    void filesPastTheAdvertisedLimitFailInTheAdapterBeforeTheyAreSent() throws Exception {
        long tooMany = 25L * 1024 * 1024 + 1;
        MessageAttachment huge = new MessageAttachment("f1", "huge.bin", "application/octet-stream", tooMany);
        RunRequest request = request("run-big", "look").withAttachments(List.of(huge), file -> {
            throw new AssertionError("a file past the simulator's limit is not even read");
        });

        List<AgentStreamEvent> events = events(request);

        assertThat(events).singleElement().isInstanceOfSatisfying(AgentStreamEvent.RunFailed.class, failed -> {
            assertThat(failed.code()).isEqualTo("TOO_LARGE");
            assertThat(failed.message()).contains("at most 26214400 bytes per message");
        });
        assertThat(simulator.request("run-big")).isEmpty();
    }

    @Test
    void badFilesAreRefusedWith400BeforeAnythingStarts() throws Exception {
        String png = Base64.getEncoder().encodeToString(PNG);
        record Bad(String says, ObjectNode file) {
        }
        List<Bad> cases = List.of(
                new Bad("attachments[0].name '../../etc/passwd' holds a path separator", file("../../etc/passwd", "text/plain", png)),
                new Bad("'a\\\\b.txt' holds a path separator", file("a\\b.txt", "text/plain", png)),
                new Bad("'nul\\u0000.txt' holds a path separator, a control character", file("nul\0.txt", "text/plain", png)),
                new Bad("'.hidden' starts or ends with a dot or a space", file(".hidden", "text/plain", png)),
                new Bad("'trailing ' starts or ends with a dot or a space", file("trailing ", "text/plain", png)),
                new Bad("is not NFC-normalised", file("cafe\u0301.txt", "text/plain", png)),
                new Bad("attachments[0].name must be a non-blank string", file("", "text/plain", png)),
                new Bad("mediaType must be a lower-case media type", file("cat.png", "Image/PNG", png)),
                new Bad("data (cat.png) is not valid Base64", file("cat.png", "image/png", "not base64!")),
                new Bad("data (cat.png) is not valid Base64", file("cat.png", "image/png", png.replace("=", ""))),
                new Bad("says size 1 but its data holds 1234 bytes", file("cat.png", "image/png", png).put("size", 1)));
        for (int i = 0; i < cases.size(); i++) {
            Bad bad = cases.get(i);
            String runId = "bad-" + i;

            HttpResponse<String> refused = run(runId, JSON.createArrayNode().add(bad.file()));

            assertThat(refused.statusCode()).as(bad.says()).isEqualTo(400);
            JsonNode error = JSON.readTree(refused.body()).path("error");
            assertThat(error.path("code").asText()).isEqualTo("INVALID_REQUEST");
            assertThat(error.path("message").asText()).contains(bad.says());
            assertThat(simulator.runStatus(runId)).as("nothing started for %s", bad.file()).isEmpty();
        }
        assertThat(run("not-a-list", JSON.createObjectNode()).statusCode()).isEqualTo(400);
    }

    @Test
    void tooManyFilesOrBytesAre413TooLargeAndABodyOverTheGeneralLimitIsTaken() throws Exception {
        ArrayNode eleven = JSON.createArrayNode();
        for (int i = 0; i < 11; i++) {
            eleven.add(file("f" + i + ".txt", "text/plain", "aGk="));
        }
        HttpResponse<String> many = run("many", eleven);
        assertThat(many.statusCode()).isEqualTo(413);
        assertThat(JSON.readTree(many.body()).path("error").path("code").asText()).isEqualTo("TOO_LARGE");
        assertThat(JSON.readTree(many.body()).path("error").path("message").asText()).contains("at most 10 per message");

        byte[] over = new byte[25 * 1024 * 1024 + 1];
        HttpResponse<String> big = run("big", JSON.createArrayNode().add(file("big.bin", "application/octet-stream",
                Base64.getEncoder().encodeToString(over))));
        assertThat(big.statusCode()).as("the body may hold the Base64 of the limit; the files may not pass it").isEqualTo(413);
        assertThat(JSON.readTree(big.body()).path("error").path("code").asText()).isEqualTo("TOO_LARGE");
        assertThat(JSON.readTree(big.body()).path("error").path("message").asText()).contains("more than 26214400 bytes");
        assertThat(simulator.runStatus("many")).isEmpty();
        assertThat(simulator.runStatus("big")).isEmpty();

        byte[] twoMiB = bytes(new byte[0], 2 * 1024 * 1024);
        HttpResponse<String> taken = run("two-mib", JSON.createArrayNode().add(file("data.bin", "application/octet-stream",
                Base64.getEncoder().encodeToString(twoMiB)).put("size", twoMiB.length)));
        assertThat(taken.statusCode()).isEqualTo(200);
        assertThat(taken.body()).contains("Received data.bin (application/octet-stream, 2097152 bytes, sha256 "
                + sha256(twoMiB).substring(0, 12) + ")");
    }

    // ------------------------------------------------------------------ helpers

    private static ObjectNode file(String name, String mediaType, String data) {
        return JSON.createObjectNode().put("name", name).put("mediaType", mediaType).put("data", data);
    }

    /** {@code POST /run} of a plain question with these {@code attachments}; a 200's stream read to its end. */
    private HttpResponse<String> run(String runId, JsonNode attachments) throws Exception {
        ObjectNode body = JSON.createObjectNode().put("runId", runId).put("userMessage", "what is this?");
        body.set("attachments", attachments);
        return http.send(HttpRequest.newBuilder(URI.create(simulator.baseUrl() + "/run")).timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + TOKEN).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body))).build(),
                HttpResponse.BodyHandlers.ofString());
    }

    private static RunRequest request(String runId, String message) {
        return new RunRequest("thread-" + runId, runId, ALICE, runId + ":answer", message, null, null, null, null,
                List.of(), Map.of(), ConversationHistory.empty());
    }

    /** Every event of the adapter's run, to its end. */
    private List<AgentStreamEvent> events(RunRequest request) {
        return StreamCollector.collect(adapter.generateResponse(request));
    }

    private static String upload(ChatEngine engine, String thread, String name, byte[] content) {
        return engine.attachments().upload(ALICE, thread, name, null, new ByteArrayInputStream(content)).id();
    }

    private static Run awaitEnd(ChatEngine engine, RunTicket ticket) {
        return Await.until(() -> engine.state(ALICE, ticket.runId()).run(), r -> r.status().isTerminal(),
                "run " + ticket.runId() + " to end");
    }

    private String answer(RunTicket ticket) {
        return ((AssistantMessage) store.findMessage(ticket.assistantMessageId()).orElseThrow()).text();
    }

    private static String sha256(byte[] content) throws Exception {
        return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
    }

    private static byte[] bytes(byte[] head, int size) {
        byte[] bytes = new byte[size];
        for (int i = 0; i < size; i++) {
            bytes[i] = (byte) (i * 31 + 7);
        }
        System.arraycopy(head, 0, bytes, 0, head.length);
        return bytes;
    }
}
