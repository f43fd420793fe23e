package dev.parley.chat.springai;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.testing.openai.ModelAttachmentsContract;
import dev.parley.chat.testing.openai.Sse;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A person's files through the engine, Spring AI's OpenAI model and a loopback OpenAI-compatible server. */
class SpringAiAttachmentsTest extends ModelAttachmentsContract {
    private static final byte[] MP3 = bytes(new byte[] {'I', 'D', '3', 4, 0}, 200);

    @Override
    protected ModelClient client(String baseUrl) {
        return SpringAiModelClient.of(OpenAiModels.model(baseUrl));
    }

    /** No MP3: Spring AI's OpenAI model labels it wav. */
    @Override
    protected Set<String> declaredTypes() {
        return Set.of("image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf", "audio/wav",
                "text/plain", "text/markdown", "text/csv", "application/json");
    }

    /** Spring AI sends a PDF's media name, the file's. */
    @Override
    protected String pdfFilename(String name) {
        return name;
    }

    @Test
    void aPlainTextFileGoesAsReadableTextNeverAsABase64DataUrl() {
        replies(Sse.stream().text("Two eggs.").finish("stop").done());
        ChatEngine engine = engine();
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        byte[] notes = "buy 2 eggs\nand milk\n".getBytes(StandardCharsets.UTF_8);

        ask(engine, threadId, "what do I buy?", List.of(upload(engine, threadId, "list.txt", notes)));

        JsonNode question = lastMessage(requests().get(0));
        assertThat(text(question)).isEqualTo("what do I buy?\n\n<file name=\"list.txt\" type=\"text/plain\">\n"
                + "buy 2 eggs\nand milk\n</file>");
        assertThat(requests().get(0).toString()).doesNotContain(base64(notes)).doesNotContain("data:text/plain");
    }

    @Test
    void mp3IsRefusedBeforeStoringAndCannotBeDeclared() {
        ChatEngine engine = engine();
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        assertThatThrownBy(() -> upload(engine, threadId, "song.mp3", MP3)).isInstanceOfSatisfying(ChatException.class,
                e -> assertThat(e.getMessage()).contains("audio/mpeg").contains("WAV audio"));
        assertThat(store.storedAttachmentBytes(ALICE)).isZero();

        assertThatThrownBy(() -> SpringAiModelClient.builder(OpenAiModels.model(baseUrl()))
                .attachmentTypes(Set.of("audio/mpeg"))).isInstanceOfSatisfying(ChatException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.CONFIGURATION);
                    assertThat(e.getMessage()).contains("labels MP3 as wav");
                });
        SpringAiModelClient imagesOnly = SpringAiModelClient.builder(OpenAiModels.model(baseUrl()))
                .attachmentTypes(Set.of("image/webp")).build();
        assertThat(imagesOnly.attachmentSupport().mediaTypes()).containsExactly("image/webp");
        assertThat(imagesOnly.attachmentSupport().limitText()).isEqualTo("this model takes WebP images");
    }
}
