package dev.parley.chat.springai;

import dev.parley.chat.agent.ModelCall;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.agent.ModelListener;
import dev.parley.chat.agent.ModelRequest;
import dev.parley.chat.runtime.AttachmentSupport;
import dev.parley.chat.runtime.ModelOption;
import dev.parley.chat.springai.internal.Failures;
import dev.parley.chat.springai.internal.Prompts;
import dev.parley.chat.springai.internal.StreamedCall;
import dev.parley.chat.springai.internal.UserMessages;
import io.micrometer.observation.Observation;
import io.micrometer.observation.contextpropagation.ObservationThreadLocalAccessor;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;
import reactor.core.publisher.Flux;

/**
 * A {@link ModelClient} over a Spring AI {@link ChatModel}'s {@code stream(Prompt)}, so that a Spring AI model
 * bean (OpenAI and compatible servers such as Ollama, vLLM or llama.cpp, Anthropic, …) runs Parley's agent loop:
 *
 * <pre>{@code
 * RuntimeAdapter runtime = AgentLoopRuntime.builder(SpringAiModelClient.of(chatModel)).build();
 * }</pre>
 *
 * <p>Each call sends the conversation as Spring AI messages, and the run's tools as {@code ToolCallback}s that
 * only describe them: since Spring AI 2.0 a {@code ChatModel} never runs tools itself (the tool loop moved to
 * {@code ChatClient}'s advisors, and {@code internalToolExecutionEnabled} was removed), so every call the model
 * proposes comes back to the agent loop (the callbacks throw if anything runs them). The call's options are the
 * model's own ({@link ChatModel#getOptions()}, or {@link Builder#options}) with the chosen model and the run's
 * tools in place of any tools they had.
 *
 * <p>A person's files go with their message: images, PDFs and WAV recordings as Spring AI {@code Media} named
 * after their file, text files (plain text, Markdown, CSV, JSON) as text after the person's words, between lines
 * naming the file — never as {@code Media}, which Spring AI's OpenAI model would send Base64-encoded. MP3 is not
 * declared: that model labels it {@code wav}.
 *
 * <p>Text streams as it comes; a tool call arrives complete (Spring AI's OpenAI model merges a call's chunks
 * before handing it on); reasoning streams where the model puts it in the message's {@code reasoningContent}
 * metadata (the OpenAI model does for {@code reasoning_content}, as DeepSeek, vLLM and Ollama send it). Usage is
 * the last one the stream reported. {@link ModelCall#cancel()} disposes the subscription, which closes the
 * provider's stream; nothing is relayed after it. Failures are {@link dev.parley.chat.agent.ModelFailure}s.
 * Thread-safe; {@link #stream} subscribes and returns (Spring AI's models stream asynchronously).
 */
public final class SpringAiModelClient implements ModelClient {
    private final ChatModel model;
    private final @Nullable ChatOptions options;
    private final List<ModelOption> models;
    private final AttachmentSupport attachmentSupport;

    private SpringAiModelClient(Builder builder) {
        this.model = builder.model;
        this.options = builder.options;
        this.models = builder.models;
        this.attachmentSupport = UserMessages.support(builder.attachmentTypes);
    }

    /** A client over {@code model} with the default settings. */
    public static SpringAiModelClient of(ChatModel model) {
        return builder(model).build();
    }

    /** Starts configuring a client over {@code model}. */
    public static Builder builder(ChatModel model) {
        return new Builder(model);
    }

    /**
     * Streams {@code request} from the model. Never throws: a request that cannot be built (say, tools for a
     * model whose options take none) and a model that fails at once are reported to {@code listener}.
     */
    @Override
    public ModelCall stream(ModelRequest request, ModelListener listener) {
        StreamedCall call = new StreamedCall(listener);
        Prompt prompt;
        try {
            prompt = Prompts.toPrompt(request, options != null ? options : model.getOptions());
        } catch (RuntimeException e) {
            call.fail(Failures.invalidRequest(e));
            return call;
        }
        try {
            withCallersObservation(model.stream(prompt)).subscribe(call.subscriber());
        } catch (RuntimeException e) {
            call.fail(Failures.of(e));
        }
        return call;
    }

    /**
     * The stream with the observation current on the calling thread (Parley's model call, when runs are traced)
     * in its Reactor context, where Spring AI's models look for the parent of their own observation: a streamed
     * call does not see the thread's. Unchanged when no observation is current, or without Micrometer's
     * context-propagation library (an optional dependency of Micrometer's, which Spring AI's OpenAI model brings).
     */
    private static Flux<ChatResponse> withCallersObservation(Flux<ChatResponse> stream) {
        return CurrentObservation.PRESENT ? CurrentObservation.put(stream) : stream;
    }

    /** Loads Micrometer's context-propagation classes only where they are. */
    private static final class CurrentObservation {
        static final boolean PRESENT = present("io.micrometer.context.ThreadLocalAccessor");

        static Flux<ChatResponse> put(Flux<ChatResponse> stream) {
            Observation current = ObservationThreadLocalAccessor.getInstance().getValue();
            return current == null ? stream
                    : stream.contextWrite(context -> context.put(ObservationThreadLocalAccessor.KEY, current));
        }

        private static boolean present(String className) {
            try {
                Class.forName(className, false, SpringAiModelClient.class.getClassLoader());
                return true;
            } catch (ClassNotFoundException | LinkageError e) {
                return false;
            }
        }
    }

    @Override
    public List<ModelOption> models() {
        return models;
    }

    /**
     * PNG, JPEG, GIF and WebP images, PDF documents, WAV audio, and text files (plain text, Markdown, CSV, JSON),
     * or those of them {@link Builder#attachmentTypes} names. Not MP3: Spring AI's OpenAI model labels an
     * {@code audio/mpeg} recording as {@code wav}.
     */
    @Override
    public AttachmentSupport attachmentSupport() {
        return attachmentSupport;
    }

    /** Configures a {@link SpringAiModelClient}. Not thread-safe. */
    public static final class Builder {
        private final ChatModel model;
        private @Nullable ChatOptions options;
        private List<ModelOption> models = List.of();
        private Set<String> attachmentTypes = UserMessages.SUPPORTED;

        private Builder(ChatModel model) {
            this.model = Objects.requireNonNull(model, "model");
        }

        /**
         * The options each call starts from (default: the model's own, {@link ChatModel#getOptions()}). They must
         * be the model's own kind (Spring AI's OpenAI model casts them to {@code OpenAiChatOptions}) and, for
         * tools, a {@code ToolCallingChatOptions}; the call sets the model and the tools on a copy.
         */
        public Builder options(ChatOptions value) {
            this.options = Objects.requireNonNull(value, "options");
            return this;
        }

        /**
         * The models a person may choose from (default none: the options' model). A chosen model's id is set as
         * the call's model, so the ids must be names the provider knows.
         */
        public Builder models(List<ModelOption> value) {
            this.models = List.copyOf(value);
            return this;
        }

        /**
         * The attachments the client declares, when the model reads fewer than the client can send (default all
         * of them: {@code image/png}, {@code image/jpeg}, {@code image/gif}, {@code image/webp},
         * {@code application/pdf}, {@code audio/wav}, {@code text/plain}, {@code text/markdown},
         * {@code text/csv}, {@code application/json}); empty for none. Not every model takes every kind (few take
         * audio, some no PDFs): the engine refuses what is not declared before storing it, where the provider
         * would fail the run.
         *
         * @throws dev.parley.chat.ChatException CONFIGURATION if a type is not one of those
         */
        public Builder attachmentTypes(Set<String> value) {
            Set<String> types = Set.copyOf(value);
            UserMessages.support(types);
            this.attachmentTypes = types;
            return this;
        }

        public SpringAiModelClient build() {
            return new SpringAiModelClient(this);
        }
    }
}
