package dev.parley.chat.langchain4j;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.langchain4j.data.message.ImageContent;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.testing.openai.ModelAttachmentsContract;
import dev.parley.chat.testing.openai.Sse;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A person's files through the engine, LangChain4j's OpenAI model and a loopback OpenAI-compatible server. */
class LangChain4jAttachmentsTest extends ModelAttachmentsContract {
    private static final byte[] MP3 = bytes(new byte[] {'I', 'D', '3', 4, 0}, 200);

    @Override
    protected ModelClient client(String baseUrl) {
        return LangChain4jModelClient.of(OpenAiModels.model(baseUrl));
    }

    @Override
    protected Set<String> declaredTypes() {
        return Set.of("image/png", "image/jpeg", "image/gif", "image/webp", "application/pdf", "audio/wav",
                "audio/mpeg", "text/plain", "text/markdown", "text/csv", "application/json");
    }

    /** LangChain4j's OpenAI model names every PDF so. */
    @Override
    protected String pdfFilename(String name) {
        return "pdf_file";
    }

    @Test
    void imagesAreSentAtAutoDetailUnlessConfiguredAndMp3GoesAsFormatMp3() {
        replies(Sse.stream().text("A cat and a song.").finish("stop").done());
        ChatEngine engine = engine();
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();

        ask(engine, threadId, "and these?", List.of(upload(engine, threadId, "cat.png", PNG),
                upload(engine, threadId, "song.mp3", MP3)));

        JsonNode question = lastMessage(requests().get(0));
        assertThat(parts(question, "image_url")).singleElement()
                .satisfies(image -> assertThat(image.path("image_url").path("detail").asText()).isEqualTo("auto"));
        assertThat(parts(question, "input_audio")).singleElement().satisfies(audio -> {
            assertThat(audio.path("input_audio").path("format").asText()).isEqualTo("mp3");
            assertThat(audio.path("input_audio").path("data").asText()).isEqualTo(base64(MP3));
        });
    }

    @Test
    void theDeclaredTypesCanBeNarrowedAndOnlyToTypesTheClientSends() {
        LangChain4jModelClient imagesOnly = LangChain4jModelClient.builder(OpenAiModels.model(baseUrl()))
                .attachmentTypes(Set.of("image/png", "image/jpeg")).imageDetail(ImageContent.DetailLevel.HIGH).build();
        assertThat(imagesOnly.attachmentSupport().mediaTypes()).containsExactlyInAnyOrder("image/png", "image/jpeg");
        assertThat(imagesOnly.attachmentSupport().limitText()).isEqualTo("this model takes PNG and JPEG images");
        assertThat(client(baseUrl()).attachmentSupport().limitText()).isEqualTo("this model takes PNG, JPEG, GIF and"
                + " WebP images, PDF documents, WAV and MP3 audio, and text files (plain text, Markdown, CSV, JSON)");
        assertThat(LangChain4jModelClient.builder(OpenAiModels.model(baseUrl())).attachmentTypes(Set.of()).build()
                .attachmentSupport().mediaTypes()).isEmpty();
        assertThatThrownBy(() -> LangChain4jModelClient.builder(OpenAiModels.model(baseUrl()))
                .attachmentTypes(Set.of("image/png", "video/mp4"))).isInstanceOfSatisfying(ChatException.class,
                        e -> {
                            assertThat(e.code()).isEqualTo(ErrorCode.CONFIGURATION);
                            assertThat(e.getMessage()).contains("video/mp4");
                        });
    }
}
