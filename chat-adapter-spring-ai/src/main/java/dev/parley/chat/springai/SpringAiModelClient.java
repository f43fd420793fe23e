package dev.parley.chat.springai;

import dev.parley.chat.agent.ModelCall;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.agent.ModelListener;
import dev.parley.chat.agent.ModelRequest;
import dev.parley.chat.runtime.ModelOption;
import dev.parley.chat.springai.internal.Failures;
import dev.parley.chat.springai.internal.Prompts;
import dev.parley.chat.springai.internal.StreamedCall;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.chat.prompt.ChatOptions;
import org.springframework.ai.chat.prompt.Prompt;

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

    private SpringAiModelClient(Builder builder) {
        this.model = builder.model;
        this.options = builder.options;
        this.models = builder.models;
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
            model.stream(prompt).subscribe(call.subscriber());
        } catch (RuntimeException e) {
            call.fail(Failures.of(e));
        }
        return call;
    }

    @Override
    public List<ModelOption> models() {
        return models;
    }

    /** Configures a {@link SpringAiModelClient}. Not thread-safe. */
    public static final class Builder {
        private final ChatModel model;
        private @Nullable ChatOptions options;
        private List<ModelOption> models = List.of();

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

        public SpringAiModelClient build() {
            return new SpringAiModelClient(this);
        }
    }
}
