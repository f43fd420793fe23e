package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.attachment.AttachmentStore;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.testing.ScriptedRuntime;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Uploading and downloading attachments over loopback: raw and multipart uploads, what the runtime receives,
 * downloads with the safety headers and byte ranges, and refusals that keep nothing.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "parley.owner.mode=HEADER",
    "parley.attachments.max-file-size=64KB"
})
class AttachmentsHttpTest {
    static final String ALICE = "alice-files";
    static final String BOB = "bob-files";
    static final byte[] PNG = bytes(new byte[] {(byte) 0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A}, 5_000);
    static final byte[] PDF = bytes("%PDF-1.4\n".getBytes(StandardCharsets.US_ASCII), 9_000);

    @LocalServerPort
    int port;
    @Autowired
    ChatStore store;
    @Autowired
    RuntimeAdapter runtime;

    HttpSupport http;
    String session;

    static byte[] bytes(byte[] head, int size) {
        byte[] bytes = new byte[size];
        for (int i = 0; i < size; i++) {
            bytes[i] = (byte) (i * 13 + 5);
        }
        System.arraycopy(head, 0, bytes, 0, head.length);
        return bytes;
    }

    @BeforeEach
    void session() {
        http = new HttpSupport(port);
        session = http.newSession(ALICE);
    }

    record Bytes(int status, java.net.http.HttpHeaders headers, byte[] body) {
        String header(String name) {
            return headers.firstValue(name).orElse(null);
        }

        JsonNode json() {
            return ChatJson.shared().readTree(new String(body, StandardCharsets.UTF_8));
        }
    }

    Bytes exchange(HttpRequest.Builder request, String owner) {
        request.timeout(Duration.ofSeconds(20));
        if (owner != null) {
            request.header("X-Parley-Owner", owner);
        }
        try {
            HttpResponse<byte[]> response = HttpSupport.HTTP.send(request.build(), HttpResponse.BodyHandlers.ofByteArray());
            return new Bytes(response.statusCode(), response.headers(), response.body());
        } catch (IOException e) {
            throw new AssertionError(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    HttpRequest.Builder to(String path) {
        return HttpRequest.newBuilder(URI.create(http.origin() + "/api/chat" + path));
    }

    Bytes uploadRaw(String owner, String thread, String name, String type, byte[] body) {
        HttpRequest.Builder request = to("/sessions/" + thread + "/attachments?name=" + name)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body));
        if (type != null) {
            request.header("Content-Type", type);
        }
        return exchange(request, owner);
    }

    Bytes uploadMultipart(String owner, String thread, String name, String type, byte[] content) {
        String boundary = "parley-test-boundary";
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(("--" + boundary + "\r\nContent-Disposition: form-data; name=\"file\"; filename=\"" + name
                + "\"\r\nContent-Type: " + type + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
        body.writeBytes(content);
        body.writeBytes(("\r\n--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8));
        return exchange(to("/sessions/" + thread + "/attachments")
                .header("Content-Type", "multipart/form-data; boundary=" + boundary)
                .POST(HttpRequest.BodyPublishers.ofByteArray(body.toByteArray())), owner);
    }

    Bytes download(String owner, String id, String range) {
        HttpRequest.Builder request = to("/attachments/" + id).GET();
        if (range != null) {
            request.header("Range", range);
        }
        return exchange(request, owner);
    }

    long storedBytes(String owner) {
        return ((AttachmentStore) store).storedAttachmentBytes(owner);
    }

    @Test
    void anUploadSentWithAMessageReachesTheRuntimeAndShowsInTheThread() throws InterruptedException {
        Bytes uploaded = uploadRaw(ALICE, session, "cat.png", "image/png", PNG);
        assertThat(uploaded.status()).isEqualTo(201);
        String id = uploaded.json().get("id").asText();
        assertThat(uploaded.json().get("mediaType").asText()).isEqualTo("image/png");
        assertThat(uploaded.json().get("size").asLong()).isEqualTo(PNG.length);

        JsonNode ticket = http.startRun(ALICE, session, Map.of("message", "what is on it?", "attachments", List.of(id)));
        http.awaitState(ALICE, ticket.get("runId").asText(), "SUCCEEDED");

        RunRequest request = ((ScriptedRuntime) runtime).requests().stream()
                .filter(r -> r.runId().equals(ticket.get("runId").asText())).findFirst().orElseThrow();
        MessageAttachment sent = new MessageAttachment(id, "cat.png", "image/png", PNG.length);
        assertThat(request.attachments()).containsExactly(sent);
        assertThat(request.attachmentContent().readAllBytes(sent)).isEqualTo(PNG);
        JsonNode view = http.get(ALICE, "/api/chat/sessions/" + session).json();
        assertThat(view.toString()).contains("\"attachments\":[{\"id\":\"" + id + "\",\"name\":\"cat.png\","
                + "\"mediaType\":\"image/png\",\"size\":" + PNG.length + "}]");
        String markdown = new String(exchange(to("/sessions/" + session + "/export?format=markdown").GET(), ALICE)
                .body(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(markdown).as("a link a person can follow from the downloaded file").contains("- [cat.png](<"
                + http.origin() + "/api/chat/attachments/" + id + ">) (image/png, " + PNG.length + " bytes)");
    }

    @Test
    void theLimitsSayWhatThisRuntimeTakesAndNeedACaller() {
        Bytes limits = exchange(to("/attachment-limits").GET(), ALICE);
        assertThat(limits.status()).isEqualTo(200);
        JsonNode body = limits.json();
        assertThat(body.get("acceptedTypes")).extracting(JsonNode::asText).containsExactly("application/pdf",
                "image/gif", "image/jpeg", "image/png", "image/webp", "text/plain");
        assertThat(body.get("maxFileBytes").asLong()).as("parley.attachments.max-file-size").isEqualTo(64 * 1024);
        assertThat(body.get("maxFilesPerMessage").asInt()).isEqualTo(10);
        assertThat(exchange(to("/attachment-limits").GET(), null).status()).isEqualTo(401);
    }

    @Test
    void aDownloadCarriesItsTypeSafetyHeadersAndServesRanges() {
        String id = uploadRaw(ALICE, session, "caf%C3%A9%20photo.png", "image/png", PNG).json().get("id").asText();

        Bytes whole = download(ALICE, id, null);
        assertThat(whole.status()).isEqualTo(200);
        assertThat(whole.body()).isEqualTo(PNG);
        assertThat(whole.header("Content-Type")).isEqualTo("image/png");
        assertThat(whole.header("X-Content-Type-Options")).isEqualTo("nosniff");
        assertThat(whole.header("Content-Security-Policy")).contains("sandbox");
        assertThat(whole.header("Content-Disposition")).startsWith("inline;")
                .contains("filename*=UTF-8''caf%C3%A9%20photo.png");
        assertThat(whole.header("Accept-Ranges")).isEqualTo("bytes");

        Bytes middle = download(ALICE, id, "bytes=100-199");
        assertThat(middle.status()).isEqualTo(206);
        assertThat(middle.header("Content-Range")).isEqualTo("bytes 100-199/" + PNG.length);
        assertThat(middle.body()).isEqualTo(Arrays.copyOfRange(PNG, 100, 200));
        Bytes tail = download(ALICE, id, "bytes=-10");
        assertThat(tail.body()).isEqualTo(Arrays.copyOfRange(PNG, PNG.length - 10, PNG.length));
        Bytes open = download(ALICE, id, "bytes=4990-");
        assertThat(open.body()).isEqualTo(Arrays.copyOfRange(PNG, 4990, PNG.length));
        Bytes beyond = download(ALICE, id, "bytes=99999-");
        assertThat(beyond.status()).isEqualTo(416);
        assertThat(beyond.header("Content-Range")).isEqualTo("bytes */" + PNG.length);
        assertThat(exchange(to("/attachments/" + id + "?download=1").GET(), ALICE).header("Content-Disposition"))
                .startsWith("attachment;");
    }

    @Test
    void aMultipartUploadIsStoredAndADocumentIsServedAsADownload() {
        Bytes uploaded = uploadMultipart(ALICE, session, "report.pdf", "application/pdf", PDF);
        assertThat(uploaded.status()).isEqualTo(201);
        JsonNode attachment = uploaded.json();
        assertThat(attachment.get("name").asText()).isEqualTo("report.pdf");
        Bytes served = download(ALICE, attachment.get("id").asText(), null);
        assertThat(served.body()).isEqualTo(PDF);
        assertThat(served.header("Content-Type")).isEqualTo("application/pdf");
        assertThat(served.header("Content-Disposition")).startsWith("attachment;");
    }

    @Test
    void mislabelledHtmlAndUnknownUploadsAreRefusedWithNothingStored() {
        long before = storedBytes(ALICE);
        assertThat(uploadRaw(ALICE, session, "cat.png", "image/png", PDF).status()).isEqualTo(400);
        assertThat(uploadMultipart(ALICE, session, "cat.png", "image/png", PDF).status()).isEqualTo(400);
        assertThat(uploadRaw(ALICE, session, "page.txt", "text/plain",
                "<html><script>alert(1)</script>".getBytes(StandardCharsets.UTF_8)).status()).isEqualTo(400);
        assertThat(uploadRaw(ALICE, session, "empty.txt", "text/plain", new byte[0]).status()).isEqualTo(400);
        Bytes json = uploadRaw(ALICE, session, "data.json", "application/json", "{\"a\":1}".getBytes(StandardCharsets.UTF_8));
        assertThat(json.status()).isEqualTo(400);
        assertThat(json.json().get("detail").asText()).contains("the runtime cannot take");
        assertThat(storedBytes(ALICE)).isEqualTo(before);
    }

    @Test
    void anOversizedUploadIsCutOffWithNothingStored() {
        long before = storedBytes(ALICE);
        Bytes declared = uploadRaw(ALICE, session, "big.txt", "text/plain", "x".repeat(70_000).getBytes(StandardCharsets.UTF_8));
        assertThat(declared.status()).isEqualTo(413);
        assertThat(declared.json().get("code").asText()).isEqualTo("TOO_LARGE");

        AtomicLong sent = new AtomicLong();
        Supplier<InputStream> endless = () -> new InputStream() {
            @Override
            public int read() {
                return sent.incrementAndGet() > 50_000_000 ? -1 : 'y';
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (sent.get() > 50_000_000) {
                    return -1;
                }
                int n = Math.min(len, 8192);
                Arrays.fill(b, off, off + n, (byte) 'y');
                sent.addAndGet(n);
                return n;
            }
        };
        Bytes chunked = exchange(to("/sessions/" + session + "/attachments?name=stream.txt")
                .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofInputStream(endless)), ALICE);
        assertThat(chunked.status()).isEqualTo(413);
        assertThat(sent.get()).as("bytes the client got to send").isLessThan(50_000_000);
        assertThat(storedBytes(ALICE)).isEqualTo(before);
    }

    @Test
    void anotherOwnerGets404AndAnotherSitesPageIsRefused() {
        String id = uploadRaw(ALICE, session, "cat.png", "image/png", PNG).json().get("id").asText();
        assertThat(download(BOB, id, null).status()).isEqualTo(404);
        assertThat(uploadRaw(BOB, session, "mine.png", "image/png", PNG).status()).isEqualTo(404);
        String bobs = http.newSession(BOB);
        assertThat(http.call(BOB, "POST", "/api/chat/sessions/" + bobs + "/runs",
                "{\"message\":\"steal\",\"attachments\":[\"" + id + "\"]}").status()).isEqualTo(404);
        Bytes crossSite = exchange(to("/sessions/" + session + "/attachments?name=x.png").header("Content-Type", "image/png")
                .header("Origin", "https://evil.example").POST(HttpRequest.BodyPublishers.ofByteArray(PNG)), ALICE);
        assertThat(crossSite.status()).isEqualTo(403);
        assertThat(http.call(ALICE, "POST", "/api/chat/sessions/" + session + "/runs",
                "{\"message\":\"x\",\"attachments\":\"" + id + "\"}").status()).isEqualTo(400);
    }

    private List<JsonNode> agUi(String threadId, String messages) {
        HttpSupport.Reply reply = http.post(ALICE, "/api/chat/agui", """
                {"threadId":"%s","runId":"%s","state":{},"tools":[],"context":[],"forwardedProps":{},
                 "messages":%s}""".formatted(threadId, java.util.UUID.randomUUID(), messages));
        assertThat(reply.status()).as(reply.body()).isEqualTo(200);
        return Arrays.stream(reply.body().split("\n\n")).filter(f -> f.startsWith("data: "))
                .map(f -> ChatJson.shared().readTree(f.substring("data: ".length()))).toList();
    }

    private static String base64(byte[] bytes) {
        return java.util.Base64.getEncoder().encodeToString(bytes);
    }

    /**
     * AG-UI file parts as clients send them — 1.0's image part, CopilotKit's document part with the name in
     * {@code metadata.filename}, 0.0.59's binary part — become the new message's attachments, stored once, and a
     * later snapshot gives them back as parts with their download address.
     */
    @Test
    void agUiFilePartsBecomeAttachmentsAndComeBackInTheSnapshot() {
        String threadId = java.util.UUID.randomUUID().toString();
        String first = """
                [{"id":"u-1","role":"user","content":[{"type":"text","text":"compare these"},
                  {"type":"image","source":{"type":"data","value":"%s","mimeType":"image/png"}},
                  {"type":"document","source":{"type":"data","value":"%s","mimeType":"application/pdf"},
                   "metadata":{"filename":"report.pdf"}},
                  {"type":"binary","mimeType":"text/plain","data":"%s","filename":"notes.txt"}]}]"""
                .formatted(base64(PNG), base64(PDF), base64("plain notes".getBytes(StandardCharsets.UTF_8)));
        List<JsonNode> events = agUi(threadId, first);
        assertThat(events.get(events.size() - 1).get("type").asText()).isEqualTo("RUN_FINISHED");
        RunRequest request = ((ScriptedRuntime) runtime).requests().stream().filter(r -> r.threadId().equals(threadId))
                .findFirst().orElseThrow();
        assertThat(request.userMessage()).isEqualTo("compare these");
        assertThat(request.attachments()).extracting(MessageAttachment::mediaType)
                .containsExactly("image/png", "application/pdf", "text/plain");
        assertThat(request.attachments()).extracting(MessageAttachment::name)
                .containsExactly("file", "report.pdf", "notes.txt");
        assertThat(request.attachmentContent().readAllBytes(request.attachments().get(1))).isEqualTo(PDF);
        long stored = storedBytes(ALICE);

        String again = first.substring(0, first.length() - 1) + ",{\"id\":\"u-2\",\"role\":\"user\",\"content\":\"and?\"}]";
        JsonNode snapshot = agUi(threadId, again).stream().filter(e -> e.get("type").asText().equals("MESSAGES_SNAPSHOT"))
                .findFirst().orElseThrow();
        assertThat(storedBytes(ALICE)).as("the resent history stores nothing again").isEqualTo(stored);
        JsonNode parts = snapshot.get("messages").get(0).get("content");
        assertThat(parts.get(0).get("text").asText()).isEqualTo("compare these");
        assertThat(parts.get(2).get("type").asText()).isEqualTo("document");
        String url = parts.get(2).get("source").get("value").asText();
        assertThat(url).isEqualTo("/api/chat/attachments/" + request.attachments().get(1).id());
        assertThat(parts.get(2).get("metadata").get("filename").asText()).isEqualTo("report.pdf");
        assertThat(exchange(HttpRequest.newBuilder(URI.create(http.origin() + url)).GET(), ALICE).body()).isEqualTo(PDF);
    }

    @Test
    void agUiFilesThatCannotBeTakenAreRefusedAndCreateNoThread() {
        String threadId = java.util.UUID.randomUUID().toString();
        String byUrl = """
                [{"id":"u-1","role":"user","content":[{"type":"text","text":"look"},
                  {"type":"image","source":{"type":"url","value":"http://169.254.169.254/latest/meta-data"}}]}]""";
        HttpSupport.Reply refused = http.post(ALICE, "/api/chat/agui", """
                {"threadId":"%s","runId":"r","messages":%s}""".formatted(threadId, byUrl));
        assertThat(refused.status()).isEqualTo(400);
        assertThat(refused.json().get("detail").asText()).contains("fetches no addresses");
        String mislabelled = """
                [{"id":"u-1","role":"user","content":[{"type":"text","text":"look"},
                  {"type":"image","source":{"type":"data","value":"%s","mimeType":"image/png"}}]}]""".formatted(base64(PDF));
        assertThat(http.post(ALICE, "/api/chat/agui", """
                {"threadId":"%s","runId":"r","messages":%s}""".formatted(threadId, mislabelled)).status()).isEqualTo(400);
        assertThat(http.get(ALICE, "/api/chat/sessions/" + threadId).status()).isEqualTo(404);
    }
}
