package dev.parley.chat.langchain4j;

import dev.langchain4j.data.message.ImageContent;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.chat.request.ChatRequest;
import dev.parley.chat.agent.ModelCall;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.agent.ModelListener;
import dev.parley.chat.agent.ModelRequest;
import dev.parley.chat.langchain4j.internal.ChatRequests;
import dev.parley.chat.langchain4j.internal.Failures;
import dev.parley.chat.langchain4j.internal.StreamedCall;
import dev.parley.chat.langchain4j.internal.UserContents;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.ModelOption;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A {@link ModelClient} over a LangChain4j {@link StreamingChatModel}, so that every provider LangChain4j
 * supports (OpenAI and compatible servers such as Ollama, vLLM or llama.cpp, Anthropic, Gemini, Bedrock, …)
 * runs Parley's agent loop:
 *
 * <pre>{@code
 * RuntimeAdapter runtime = AgentLoopRuntime.builder(LangChain4jModelClient.of(streamingChatModel)).build();
 * }</pre>
 *
 * <p>Each call sends the conversation as LangChain4j messages, the tools as {@code ToolSpecification}s (their
 * JSON Schema read as LangChain4j reads one) and the chosen model as the request's model name; it relays
 * partial text, partial thinking and partial tool calls as they stream, and reports the complete response
 * with its tool calls, token usage and finish reason. The model only proposes tool calls: LangChain4j's
 * {@code StreamingChatModel} never runs tools, the agent loop does. Failures are reported as
 * {@link dev.parley.chat.agent.ModelFailure}s (HTTP 429, 401/403, context-window errors, 5xx, connection
 * errors and broken streams each have their kind).
 *
 * <p>A person's files go with their message: images as {@code ImageContent} (at {@link Builder#imageDetail}),
 * PDFs as {@code PdfFileContent}, WAV and MP3 recordings as {@code AudioContent}, and text files (plain text,
 * Markdown, CSV, JSON) as text after the person's words, between lines naming the file — LangChain4j has no
 * content for a text file. Which of these the model reads depends on the provider; narrow what the client
 * declares with {@link Builder#attachmentTypes}.
 *
 * <p>Thinking arrives only where the model is configured to return it (for OpenAI-compatible servers,
 * {@code OpenAiStreamingChatModel.builder().returnThinking(true)} reads {@code reasoning_content}).
 * {@link ModelCall#cancel()} stops the stream through LangChain4j's {@code StreamingHandle}, which a model
 * hands over with its first streamed piece: a cancel before that takes effect when the piece arrives, and
 * nothing is relayed after a cancel. Thread-safe; {@link #stream} returns once the model has started the call
 * (LangChain4j's HTTP-based models start it asynchronously).
 */
public final class LangChain4jModelClient implements ModelClient {
    private final StreamingChatModel model;
    private final List<ModelOption> models;
    private final ImageContent.DetailLevel imageDetail;
    private final AttachmentSupport attachmentSupport;

    private LangChain4jModelClient(Builder builder) {
        this.model = builder.model;
        this.models = builder.models;
        this.imageDetail = builder.imageDetail;
        this.attachmentSupport = UserContents.support(builder.attachmentTypes);
    }

    /** A client over {@code model} with the default settings. */
    public static LangChain4jModelClient of(StreamingChatModel model) {
        return builder(model).build();
    }

    /** Starts configuring a client over {@code model}. */
    public static Builder builder(StreamingChatModel model) {
        return new Builder(model);
    }

    /**
     * Sends {@code request} to the model. Never throws: a request LangChain4j refuses (say, a tool schema it
     * cannot read) is reported to {@code listener} as a failure.
     */
    @Override
    public ModelCall stream(ModelRequest request, ModelListener listener) {
        StreamedCall call = new StreamedCall(listener);
        ChatRequest chatRequest;
        try {
            chatRequest = ChatRequests.toChatRequest(request, imageDetail);
        } catch (RuntimeException e) {
            call.onError(Failures.invalidRequest(e));
            return call;
        }
        try {
            model.chat(chatRequest, call);
        } catch (RuntimeException e) {
            call.onError(e);
        }
        return call;
    }

    @Override
    public List<ModelOption> models() {
        return models;
    }

    /**
     * PNG, JPEG, GIF and WebP images, PDF documents, WAV and MP3 audio, and text files (plain text, Markdown, CSV,
     * JSON), or those of them {@link Builder#attachmentTypes} names.
     */
    @Override
    public AttachmentSupport attachmentSupport() {
        return attachmentSupport;
    }

    /** Configures a {@link LangChain4jModelClient}. Not thread-safe. */
    public static final class Builder {
        private final StreamingChatModel model;
        private List<ModelOption> models = List.of();
        private ImageContent.DetailLevel imageDetail = ImageContent.DetailLevel.AUTO;
        private Set<String> attachmentTypes = UserContents.SUPPORTED;

        private Builder(StreamingChatModel model) {
            this.model = Objects.requireNonNull(model, "model");
        }

        /**
         * The models a person may choose from (default none: the model's own). A chosen model's id is sent as
         * the request's model name, so the ids must be names the provider knows.
         */
        public Builder models(List<ModelOption> value) {
            this.models = List.copyOf(value);
            return this;
        }

        /**
         * The detail level images are sent at (default {@link ImageContent.DetailLevel#AUTO AUTO}: the provider
         * chooses). Set it: LangChain4j's OpenAI model sends {@code "detail":"low"} for an image without one.
         */
        public Builder imageDetail(ImageContent.DetailLevel value) {
            this.imageDetail = Objects.requireNonNull(value, "imageDetail");
            return this;
        }

        /**
         * The attachments the client declares, when the model reads fewer than the client can send (default all
         * of them: {@code image/png}, {@code image/jpeg}, {@code image/gif}, {@code image/webp},
         * {@code application/pdf}, {@code audio/wav}, {@code audio/mpeg}, {@code text/plain},
         * {@code text/markdown}, {@code text/csv}, {@code application/json}); empty for none. Not every model
         * takes every kind (few take audio, some no PDFs): the engine refuses what is not declared before storing
         * it, where the provider would fail the run.
         *
         * @throws dev.parley.chat.ChatException CONFIGURATION if a type is not one of those
         */
        public Builder attachmentTypes(Set<String> value) {
            Set<String> types = Set.copyOf(value);
            UserContents.support(types);
            this.attachmentTypes = types;
            return this;
        }

        public LangChain4jModelClient build() {
            return new LangChain4jModelClient(this);
        }
    }
}
