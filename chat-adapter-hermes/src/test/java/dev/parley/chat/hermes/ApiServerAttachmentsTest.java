package dev.parley.chat.hermes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A person's files on Hermes' API server, through the engine and the stub that checks content parts as Hermes
 * does: the question's images go as {@code image_url} data URLs on the last input item, an earlier message's are
 * named in its history text, and any other file is refused by the engine before anything is stored.
 */
class ApiServerAttachmentsTest extends ApiServerTestSupport {
    private static final byte[] PNG = bytes(new byte[] {(byte) 0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A}, 300);
    private static final byte[] JPEG = bytes(new byte[] {(byte) 0xFF, (byte) 0xD8, (byte) 0xFF, (byte) 0xE0}, 200);
    private static final byte[] PDF = bytes("%PDF-1.7\n".getBytes(StandardCharsets.US_ASCII), 400);

    private static byte[] bytes(byte[] head, int size) {
        byte[] bytes = new byte[size];
        for (int i = 0; i < size; i++) {
            bytes[i] = (byte) (i * 31 + 7);
        }
        System.arraycopy(head, 0, bytes, 0, head.length);
        return bytes;
    }

    private static String upload(ChatEngine engine, String threadId, String name, byte[] content) {
        return engine.attachments().upload(ALICE, threadId, name, null, new ByteArrayInputStream(content)).id();
    }

    private static Run ask(ChatEngine engine, String threadId, String text, List<String> files) {
        String runId = engine.startRun(ALICE, threadId, StartRun.of(text).withAttachments(files)).runId();
        return await(() -> engine.state(ALICE, runId).run(), run -> run.status().isTerminal(), "the run's end");
    }

    private static String dataUrl(String type, byte[] bytes) {
        return "data:" + type + ";base64," + Base64.getEncoder().encodeToString(bytes);
    }

    @ParameterizedTest
    @EnumSource(HermesApiStub.Line.class)
    void theQuestionsImagesGoAsImageUrlPartsOfTheLastInputItem(HermesApiStub.Line line) {
        HermesApiStub hermes = stub(line);
        ChatEngine engine = engine(apiAdapter(hermes));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        List<String> files = List.of(upload(engine, threadId, "cat.png", PNG), upload(engine, threadId, "dog.jpg", JPEG));

        assertThat(ask(engine, threadId, "which is cuter?", files).status()).isEqualTo(RunStatus.SUCCEEDED);

        JsonNode input = hermes.runs().get(0).body.path("input");
        assertThat(input.isArray()).isTrue();
        assertThat(input).hasSize(1);
        assertThat(input.get(0).path("role").asText()).isEqualTo("user");
        JsonNode parts = input.get(0).path("content");
        assertThat(parts).hasSize(3);
        assertThat(parts.get(0).path("type").asText()).isEqualTo("text");
        assertThat(parts.get(0).path("text").asText()).isEqualTo("which is cuter?");
        assertThat(parts.get(1).path("type").asText()).isEqualTo("image_url");
        assertThat(parts.get(1).path("image_url").path("url").asText()).isEqualTo(dataUrl("image/png", PNG));
        assertThat(parts.get(2).path("image_url").path("url").asText()).isEqualTo(dataUrl("image/jpeg", JPEG));
    }

    @Test
    void anEarlierMessagesImageIsNamedInItsHistoryTextAndNotSentAgain() {
        HermesApiStub hermes = stub(HermesApiStub.Line.V0_19_17);
        ChatEngine engine = engine(apiAdapter(hermes));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        ask(engine, threadId, "what is this?", List.of(upload(engine, threadId, "cat.png", PNG)));

        assertThat(ask(engine, threadId, "and its colour?", List.of()).status()).isEqualTo(RunStatus.SUCCEEDED);

        StubRun second = hermes.runs().get(1);
        assertThat(second.body.path("input").asText()).isEqualTo("and its colour?");
        assertThat(second.userTurns()).containsExactly("what is this?\n[image: cat.png]");
        assertThat(second.body.toString()).doesNotContain(Base64.getEncoder().encodeToString(PNG));
    }

    @Test
    void aPdfIsRefusedByTheEngineNamingTheLimitBeforeAnythingIsStoredOrSent() {
        HermesApiStub hermes = stub(HermesApiStub.Line.V0_19_17);
        HermesRuntimeAdapter adapter = apiAdapter(hermes);
        ChatEngine engine = engine(adapter);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();

        assertThatThrownBy(() -> upload(engine, threadId, "report.pdf", PDF)).isInstanceOfSatisfying(
                ChatException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT);
                    assertThat(e.getMessage()).contains("report.pdf").contains("application/pdf")
                            .contains("Hermes' API server takes images only (PNG, JPEG, GIF, WebP)");
                });
        assertThat(store.storedAttachmentBytes(ALICE)).isZero();
        assertThat(store.listTopLevelMessages(threadId, null, 10)).isEmpty();
        assertThat(hermes.count("POST /v1/runs")).isZero();
        assertThat(adapter.attachmentSupport().mediaTypes())
                .isEqualTo(Set.of("image/png", "image/jpeg", "image/gif", "image/webp"));
        assertThat(adapter(hermes.baseUrl(), b -> b.transport(HermesTransport.BRIDGE)).attachmentSupport())
                .isEqualTo(HermesConfig.BRIDGE_ATTACHMENTS);
    }

    @Test
    void imagesTooLargeForHermesFailTheRunBeforeAnythingIsSent() {
        HermesApiStub hermes = stub(HermesApiStub.Line.V0_19_17);
        ChatEngine engine = engine(apiAdapter(hermes));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        byte[] big = bytes(PNG, 7_600_000);

        Run run = ask(engine, threadId, "look", List.of(upload(engine, threadId, "big.png", big)));

        assertThat(run.status()).isEqualTo(RunStatus.FAILED);
        assertThat(run.error().code()).isEqualTo("TOO_LARGE");
        assertThat(run.error().message()).contains("10000000 bytes");
        assertThat(hermes.count("POST /v1/runs")).isZero();
    }
}
