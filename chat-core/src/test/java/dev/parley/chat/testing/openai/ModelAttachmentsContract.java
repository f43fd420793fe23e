package dev.parley.chat.testing.openai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Set;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A person's files through the whole engine, a {@link ModelClient} adapter and an OpenAI-compatible server on
 * loopback: what the chat-completion request holds for an image (an {@code image_url} data URL of its exact
 * bytes), a PDF (a {@code file} part with a {@code file_data} data URL), a WAV recording ({@code input_audio}), a
 * text file (its content as text, never Base64), an image of an earlier turn (sent again with that turn), and that
 * the runtime declares exactly what the client puts on the wire. An adapter's test extends this class once.
 */
public abstract class ModelAttachmentsContract extends OpenAiWire {
    protected static final String ALICE = "alice";
    protected static final byte[] PNG = bytes(new byte[] {(byte) 0x89, 'P', 'N', 'G', 0x0D, 0x0A, 0x1A, 0x0A}, 300);
    protected static final byte[] PDF = bytes("%PDF-1.7\n".getBytes(StandardCharsets.US_ASCII), 400);
    protected static final byte[] WAV = bytes("RIFF\u0024\u0000\u0000\u0000WAVEfmt ".getBytes(StandardCharsets.ISO_8859_1),
            256);
    protected static final String NOTES = "# Shopping\n\n- oat milk\n- 12 eggs (free range)\n";

    protected final InMemoryChatStore store = new InMemoryChatStore();
    private final List<ChatEngine> engines = new ArrayList<>();

    /** The adapter's client on an OpenAI-compatible server at {@code baseUrl}, with API key {@code sk-test-key}. */
    protected abstract ModelClient client(String baseUrl);

    /** Every media type the client declares, exactly. */
    protected abstract Set<String> declaredTypes();

    /** The {@code filename} the library writes on a PDF's {@code file} part for a file named {@code name}. */
    protected abstract String pdfFilename(String name);

    @AfterEach
    void closeEngines() {
        engines.forEach(ChatEngine::close);
    }

    /** The byte pattern every fixture file has, with {@code head} first. */
    protected static byte[] bytes(byte[] head, int size) {
        byte[] bytes = new byte[size];
        for (int i = 0; i < size; i++) {
            bytes[i] = (byte) (i * 31 + 7);
        }
        System.arraycopy(head, 0, bytes, 0, head.length);
        return bytes;
    }

    protected static String base64(byte[] bytes) {
        return Base64.getEncoder().encodeToString(bytes);
    }

    /** An engine over the adapter's client on the loopback server; closed after the test. */
    protected ChatEngine engine() {
        ChatEngine engine = ChatEngine.builder().store(store)
                .runtime(AgentLoopRuntime.builder(client(baseUrl())).build()).build();
        engines.add(engine);
        return engine;
    }

    protected static String upload(ChatEngine engine, String threadId, String name, byte[] content) {
        return engine.attachments().upload(ALICE, threadId, name, null, new ByteArrayInputStream(content)).id();
    }

    /** Sends {@code text} with these attachments and waits for the run to succeed. */
    protected static void ask(ChatEngine engine, String threadId, String text, List<String> attachments) {
        String runId = engine.startRun(ALICE, threadId, StartRun.of(text).withAttachments(attachments)).runId();
        Run run = Await.until(() -> engine.state(ALICE, runId).run(), r -> r.status().isTerminal(), "the run's end");
        assertThat(run.status()).as("the run: %s", run.error()).isEqualTo(RunStatus.SUCCEEDED);
    }

    /** The content parts of a message as sent ({@code "content": "…"} is one text part). */
    protected static List<JsonNode> parts(JsonNode message) {
        JsonNode content = message.path("content");
        if (content.isTextual()) {
            return List.of(JsonNodeFactory.instance.objectNode().put("type", "text").put("text", content.asText()));
        }
        return StreamSupport.stream(content.spliterator(), false).toList();
    }

    protected static List<JsonNode> parts(JsonNode message, String type) {
        return parts(message).stream().filter(p -> type.equals(p.path("type").asText())).toList();
    }

    /** The text of a message's text parts, joined by new lines. */
    protected static String text(JsonNode message) {
        return String.join("\n", parts(message, "text").stream().map(p -> p.path("text").asText()).toList());
    }

    protected static JsonNode lastMessage(JsonNode request) {
        JsonNode messages = request.path("messages");
        return messages.get(messages.size() - 1);
    }

    @Test
    void anImageAPdfARecordingAndATextFileGoOnTheWireWithTheQuestion() {
        replies(Sse.stream().text("A cat, a report, a sound and a list.").finish("stop").done());
        ChatEngine engine = engine();
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        List<String> files = List.of(upload(engine, threadId, "cat.png", PNG),
                upload(engine, threadId, "report.pdf", PDF), upload(engine, threadId, "hello.wav", WAV),
                upload(engine, threadId, "shopping.md", NOTES.getBytes(StandardCharsets.UTF_8)));

        ask(engine, threadId, "what are these?", files);

        JsonNode question = lastMessage(requests().get(0));
        assertThat(question.path("role").asText()).isEqualTo("user");
        assertThat(parts(question, "image_url")).singleElement().satisfies(image ->
                assertThat(image.path("image_url").path("url").asText())
                        .isEqualTo("data:image/png;base64," + base64(PNG)));
        assertThat(parts(question, "file")).singleElement().satisfies(pdf -> {
            assertThat(pdf.path("file").path("file_data").asText())
                    .isEqualTo("data:application/pdf;base64," + base64(PDF));
            assertThat(pdf.path("file").path("filename").asText()).isEqualTo(pdfFilename("report.pdf"));
        });
        assertThat(parts(question, "input_audio")).singleElement().satisfies(audio -> {
            assertThat(audio.path("input_audio").path("data").asText()).isEqualTo(base64(WAV));
            assertThat(audio.path("input_audio").path("format").asText()).isEqualTo("wav");
        });
        String text = text(question);
        assertThat(text).startsWith("what are these?").contains("shopping.md").contains(NOTES);
        assertThat(requests().get(0).toString())
                .doesNotContain(base64(NOTES.getBytes(StandardCharsets.UTF_8)))
                .doesNotContain("data:text/");
    }

    @Test
    void anImageOfTheFirstTurnIsSentAgainWithThatTurnOnTheSecond() {
        replies(Sse.stream().text("A cat.").finish("stop").done(), Sse.stream().text("Grey.").finish("stop").done());
        ChatEngine engine = engine();
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        ask(engine, threadId, "what is this?", List.of(upload(engine, threadId, "cat.png", PNG)));

        ask(engine, threadId, "which colour is it?", List.of());

        JsonNode messages = requests().get(1).path("messages");
        assertThat(messages).extracting(m -> m.path("role").asText()).containsExactly("user", "assistant", "user");
        assertThat(text(messages.get(0))).isEqualTo("what is this?");
        assertThat(parts(messages.get(0), "image_url")).singleElement().satisfies(image ->
                assertThat(image.path("image_url").path("url").asText())
                        .isEqualTo("data:image/png;base64," + base64(PNG)));
        assertThat(messages.get(1).path("content").asText()).isEqualTo("A cat.");
        assertThat(messages.get(2).path("content").asText()).isEqualTo("which colour is it?");
    }

    @Test
    void theRuntimeDeclaresWhatTheClientSendsAndTheEngineRefusesOtherFilesBeforeStoringThem() {
        assertThat(client(baseUrl()).attachmentSupport().mediaTypes()).isEqualTo(declaredTypes());
        ChatEngine engine = engine();
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        byte[] video = bytes(new byte[] {0, 0, 0, 0x18, 'f', 't', 'y', 'p'}, 64);

        assertThatThrownBy(() -> upload(engine, threadId, "clip.mp4", video)).isInstanceOfSatisfying(ChatException.class,
                e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT);
                    assertThat(e.getMessage()).contains("video/mp4").contains(client(baseUrl()).attachmentSupport()
                            .limitText());
                });
        assertThat(store.storedAttachmentBytes(ALICE)).isZero();
        assertThat(requests()).isEmpty();
    }
}
