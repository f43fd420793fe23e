package dev.parley.chat.hermes;

import static com.github.tomakehurst.wiremock.client.WireMock.get;
import static com.github.tomakehurst.wiremock.client.WireMock.okJson;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.testing.StreamCollector;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.ChatException;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.MessageAttachment;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.AttachmentContent;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.ConversationHistory;
import dev.parley.chat.runtime.RunRequest;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The Bridge's attachments addition on the wire: the question's files go in {@code POST /run} as Base64, only to a
 * Bridge whose {@code GET /health} takes them; anything it does not take fails the run, naming the limit, before a
 * run is sent, so no file is dropped.
 */
class BridgeAttachmentsTest extends AdapterTestSupport {
    private static final Instant T = Instant.parse("2026-01-01T00:00:00Z");
    private static final byte[] PNG = {(byte) 0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A, 1, 2, 3};
    private static final byte[] PDF = "%PDF-1.7\nhello".getBytes(StandardCharsets.US_ASCII);
    private static final MessageAttachment CAT = new MessageAttachment("f1", "cat.png", "image/png", PNG.length);
    private static final MessageAttachment REPORT = new MessageAttachment("f2", "report.pdf", "application/pdf",
            PDF.length);
    private static final String TAKES_ANY = "{\"status\":\"ok\",\"protocol\":\"hermes-bridge/1\",\"activeRuns\":0,"
            + "\"capabilities\":[\"clarify\",\"history\",\"attachments\"],\"attachments\":{\"mediaTypes\":[\"*/*\"],"
            + "\"imageTypes\":[\"image/png\"],\"maxBytes\":1000,\"maxFiles\":2}}";

    private static AttachmentContent content() {
        return file -> new ByteArrayInputStream(file.id().equals("f1") ? PNG : PDF);
    }

    private static RunRequest ask(List<MessageAttachment> files) {
        List<dev.parley.chat.model.Message> earlier = List.of(
                new UserMessage("u1", "t1", "r0", null, MessageStatus.COMPLETED, T, "what is this?", null,
                        List.of(CAT)),
                new AssistantMessage("a1", "t1", "r0", "u1", MessageStatus.COMPLETED, T, "A cat.", null, null));
        return new RunRequest("t1", "r1", "alice", "r1:answer", "and this?", null, null, null, null, List.of(), Map.of(),
                ConversationHistory.of(earlier)).withAttachments(files, content());
    }

    private List<JsonNode> runBodies() throws Exception {
        ObjectMapper json = new ObjectMapper();
        List<JsonNode> bodies = new java.util.ArrayList<>();
        for (var event : wiremock.findAll(postRequestedFor(urlEqualTo("/run")))) {
            bodies.add(json.readTree(event.getBodyAsString()));
        }
        return bodies;
    }

    private static AgentStreamEvent.RunFailed failure(List<AgentStreamEvent> events) {
        assertThat(events).last().isInstanceOf(AgentStreamEvent.RunFailed.class);
        return (AgentStreamEvent.RunFailed) events.get(events.size() - 1);
    }

    @Test
    void theQuestionsFilesGoInTheRunRequestAndEarlierOnesAreNamedInTheHistory() throws Exception {
        wiremock.stubFor(get("/health").willReturn(okJson(TAKES_ANY)));
        wiremock.stubFor(post("/run").willReturn(sse("bridge/fresh-session.sse")));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().generateResponse(ask(List.of(REPORT, CAT))));

        assertThat(events).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        JsonNode body = runBodies().get(0);
        assertThat(body.path("userMessage").asText()).isEqualTo("and this?");
        assertThat(body.path("attachments").toString()).isEqualTo("[{\"name\":\"report.pdf\",\"mediaType\":"
                + "\"application/pdf\",\"size\":" + PDF.length + ",\"data\":\"" + Base64.getEncoder().encodeToString(PDF)
                + "\"},{\"name\":\"cat.png\",\"mediaType\":\"image/png\",\"size\":" + PNG.length + ",\"data\":\""
                + Base64.getEncoder().encodeToString(PNG) + "\"}]");
        assertThat(body.path("history").get(0).path("text").asText()).isEqualTo("what is this?\n[image: cat.png]");
        assertThat(body.path("history").toString()).doesNotContain(Base64.getEncoder().encodeToString(PNG));
    }

    /**
     * The Bridge refuses names it would have to repair (protocol section 13); names Parley keeps are sent repaired
     * so that such a file does not fail the run.
     */
    @Test
    void namesTheBridgeWouldRefuseAreSentRepaired() throws Exception {
        wiremock.stubFor(get("/health").willReturn(okJson(TAKES_ANY.replace("\"maxFiles\":2", "\"maxFiles\":9"))));
        wiremock.stubFor(post("/run").willReturn(sse("bridge/fresh-session.sse")));
        String longName = "é".repeat(140) + ".pdf";
        List<MessageAttachment> files = List.of(named(".env"), named("notes:v2.txt"), named("a\u200bb <c>?.txt"),
                named("trailing. "), named("\u00a0spaced\u2003"), named(longName), named("cafe\u0301.txt"));

        List<AgentStreamEvent> events = StreamCollector.collect(adapter().generateResponse(ask(files)));

        assertThat(events).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        List<String> sent = new java.util.ArrayList<>();
        runBodies().get(0).path("attachments").forEach(file -> sent.add(file.path("name").asText()));
        assertThat(sent.subList(0, 5)).containsExactly("_env", "notes_v2.txt", "a_b _c__.txt", "trailing__",
                "_spaced_");
        assertThat(sent.get(5)).endsWith(".pdf").startsWith("éé");
        assertThat(sent.get(5).getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(255).isGreaterThan(250);
        assertThat(sent.get(6)).isEqualTo("caf\u00e9.txt");
    }

    private static MessageAttachment named(String name) {
        return new MessageAttachment("f2", name, "application/pdf", PDF.length);
    }

    @Test
    void aQuestionWithoutFilesNeitherAsksTheHealthNorSendsTheField() throws Exception {
        wiremock.stubFor(post("/run").willReturn(sse("bridge/fresh-session.sse")));

        StreamCollector.collect(adapter().generateResponse(ask(List.of())));

        assertThat(runBodies().get(0).has("attachments")).isFalse();
        assertThat(wiremock.findAll(com.github.tomakehurst.wiremock.client.WireMock.getRequestedFor(urlEqualTo("/health"))))
                .isEmpty();
    }

    @Test
    void aBridgeWithoutTheAdditionFailsTheRunNamingTheFilesAndNothingIsSent() throws Exception {
        wiremock.stubFor(get("/health").willReturn(okJson("{\"status\":\"ok\",\"protocol\":\"hermes-bridge/1\","
                + "\"capabilities\":[\"clarify\",\"history\"],\"activeRuns\":0}")));
        wiremock.stubFor(post("/run").willReturn(sse("bridge/fresh-session.sse")));

        AgentStreamEvent.RunFailed failed = failure(StreamCollector.collect(adapter().generateResponse(ask(List.of(CAT)))));

        assertThat(failed.code()).isEqualTo("UNSUPPORTED");
        assertThat(failed.message()).contains("takes no attachments").contains("cat.png")
                .contains("HermesConfig.bridgeAttachments(AttachmentSupport.NONE)");
        assertThat(runBodies()).isEmpty();
    }

    @Test
    void aTypeTheBridgeDoesNotTakeFailsTheRunNamingWhatItTakes() throws Exception {
        wiremock.stubFor(get("/health").willReturn(okJson(TAKES_ANY.replace("\"*/*\"", "\"image/*\",\"text/plain\""))));

        AgentStreamEvent.RunFailed failed = failure(StreamCollector.collect(adapter().generateResponse(
                ask(List.of(CAT, REPORT)))));

        assertThat(failed.code()).isEqualTo("INVALID_INPUT");
        assertThat(failed.message()).contains("report.pdf (application/pdf)").contains("it takes image/*, text/plain");
        assertThat(runBodies()).isEmpty();
    }

    @Test
    void filesPastTheBridgesLimitsFailTheRunTooLarge() throws Exception {
        wiremock.stubFor(get("/health").willReturn(okJson(TAKES_ANY.replace("\"maxBytes\":1000", "\"maxBytes\":20"))));
        AgentStreamEvent.RunFailed bytes = failure(StreamCollector.collect(adapter().generateResponse(
                ask(List.of(CAT, REPORT)))));
        assertThat(bytes.code()).isEqualTo("TOO_LARGE");
        assertThat(bytes.message()).contains((PNG.length + PDF.length) + " bytes").contains("at most 20 bytes");

        wiremock.stubFor(get("/health").willReturn(okJson(TAKES_ANY.replace("\"maxFiles\":2", "\"maxFiles\":1"))));
        AgentStreamEvent.RunFailed files = failure(StreamCollector.collect(adapter().generateResponse(
                ask(List.of(CAT, REPORT)))));
        assertThat(files.code()).isEqualTo("TOO_LARGE");
        assertThat(files.message()).contains("2 files").contains("at most 1");
        assertThat(runBodies()).isEmpty();
    }

    @Test
    void aFileThatCannotBeReadFailsTheRunAndNothingIsSent() throws Exception {
        wiremock.stubFor(get("/health").willReturn(okJson(TAKES_ANY)));
        RunRequest request = ask(List.of(CAT)).withAttachments(List.of(CAT), file -> {
            throw ChatException.notFound("attachment", file.id());
        });

        AgentStreamEvent.RunFailed failed = failure(StreamCollector.collect(adapter().generateResponse(request)));

        assertThat(failed.code()).isEqualTo("NOT_FOUND");
        assertThat(failed.message()).contains("cat.png could not be read");
        assertThat(runBodies()).isEmpty();
    }

    @Test
    void theBridgesOwnRefusalEndsTheRunWithItsCode() throws Exception {
        wiremock.stubFor(get("/health").willReturn(okJson(TAKES_ANY)));
        wiremock.stubFor(post("/run").willReturn(errorBody(413, "TOO_LARGE", "the attachments hold more than 1000 bytes")));

        AgentStreamEvent.RunFailed failed = failure(StreamCollector.collect(adapter().generateResponse(ask(List.of(CAT)))));

        assertThat(failed).isEqualTo(new AgentStreamEvent.RunFailed("TOO_LARGE", "the attachments hold more than 1000 bytes"));
    }

    @Test
    void whatTheAdapterDeclaresIsTheConfigurationsSetting() {
        assertThat(adapter().attachmentSupport()).isEqualTo(HermesConfig.BRIDGE_ATTACHMENTS);
        assertThat(adapter().attachmentSupport().accepts("application/x-anything")).isTrue();
        assertThat(adapter(b -> b.bridgeAttachments(AttachmentSupport.NONE)).attachmentSupport())
                .isEqualTo(AttachmentSupport.NONE);
        AttachmentSupport images = AttachmentSupport.of("image/*");
        assertThat(adapter(b -> b.bridgeAttachments(images)).attachmentSupport()).isEqualTo(images);
    }
}
