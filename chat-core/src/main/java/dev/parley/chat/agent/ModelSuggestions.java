package dev.parley.chat.agent;

import dev.parley.chat.ChatException;
import dev.parley.chat.engine.SuggestionProvider;
import dev.parley.chat.engine.SuggestionRequest;
import dev.parley.chat.model.Suggestions;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Follow-up suggestions from a model: one small, separate call per answer — no tools, no history beyond the
 * question and the answer (the answer cut to {@link Builder#maxAnswerChars}) — asking for one prompt per line.
 * Its token usage is kept with the suggestions ({@link Suggestions#usage()}). Hand it to
 * {@code ChatEngine.Builder.suggestions}; off unless a host does so. Use a cheap model for it ({@link
 * Builder#modelId}).
 *
 * <p>Thread-safe; each {@link #suggest} call blocks its (engine worker) thread until the model's stream ends, and
 * cancels the model call when that thread is interrupted (the engine's timeout does so).
 */
public final class ModelSuggestions implements SuggestionProvider {
    /** The default instruction; {@code %d} is the number of suggestions asked for. */
    public static final String DEFAULT_PROMPT = "Suggest up to %d short follow-up messages the person might send next"
            + " in this conversation, in the person's own voice and language (questions or requests, each under 80"
            + " characters). Reply with one per line and nothing else: no numbering, no quotes, no introduction.";
    private static final Pattern LIST_MARK = Pattern.compile("^\\s*(?:[-*•]|\\d+[.)])\\s*");

    private final ModelClient model;
    private final @Nullable String modelId;
    private final String prompt;
    private final int maxAnswerChars;

    private ModelSuggestions(Builder b) {
        this.model = b.model;
        this.modelId = b.modelId;
        this.prompt = b.prompt;
        this.maxAnswerChars = b.maxAnswerChars;
    }

    /** A builder over the model client to call (often a cheaper model than the agent's). */
    public static Builder builder(ModelClient model) {
        return new Builder(model);
    }

    /**
     * Asks the model and reads one suggestion per line (list marks and surrounding quotes removed).
     *
     * @throws ModelFailure if the model call fails; InterruptedException if the thread is interrupted (the model
     *     call is cancelled)
     */
    @Override
    public Suggestions suggest(SuggestionRequest request) throws InterruptedException {
        String answer = request.answer().length() > maxAnswerChars
                ? request.answer().substring(0, maxAnswerChars) + "…" : request.answer();
        ModelRequest call = new ModelRequest(modelId, prompt.formatted(request.maxSuggestions()), List.of(
                new ModelMessage.User(request.question(), List.of()),
                new ModelMessage.Assistant(answer, List.of()),
                new ModelMessage.User("What could I ask next?", List.of())), List.of());
        CompletableFuture<ModelResponse> result = new CompletableFuture<>();
        ModelCall running = model.stream(call, new ModelListener() {
            @Override
            public void onText(String delta) {
            }

            @Override
            public void onThinking(String delta) {
            }

            @Override
            public void onToolCallDelta(int index, @Nullable String id, @Nullable String name, String argumentsDelta) {
            }

            @Override
            public void onComplete(ModelResponse response) {
                result.complete(response);
            }

            @Override
            public void onError(Throwable error) {
                result.completeExceptionally(error);
            }
        });
        ModelResponse response;
        try {
            response = result.get();
        } catch (InterruptedException e) {
            running.cancel();
            throw e;
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof ChatException chat) {
                throw chat;
            }
            throw new ModelFailure(ModelFailure.Kind.FAILED, "the suggestion call failed", cause);
        }
        return new Suggestions(lines(response.text()), response.usage());
    }

    /** The non-blank lines of a reply, without list marks or surrounding quotes. */
    static List<String> lines(String text) {
        List<String> out = new ArrayList<>();
        for (String line : text.split("\\R")) {
            String s = LIST_MARK.matcher(line).replaceFirst("").strip();
            if (s.length() >= 2 && (s.startsWith("\"") && s.endsWith("\"") || s.startsWith("“") && s.endsWith("”"))) {
                s = s.substring(1, s.length() - 1).strip();
            }
            if (!s.isEmpty()) {
                out.add(s);
            }
        }
        return out;
    }

    /** Configures {@link ModelSuggestions}. Not thread-safe. */
    public static final class Builder {
        private final ModelClient model;
        private @Nullable String modelId;
        private String prompt = DEFAULT_PROMPT;
        private int maxAnswerChars = 4_000;

        private Builder(ModelClient model) {
            this.model = Objects.requireNonNull(model, "model");
        }

        /** The model to ask (default: the client's default model). */
        public Builder modelId(@Nullable String value) {
            this.modelId = value;
            return this;
        }

        /** The instruction (system prompt); {@code %d} in it becomes the number asked for. */
        public Builder prompt(String value) {
            Objects.requireNonNull(value, "prompt");
            if (value.isBlank()) {
                throw ChatException.configuration("the suggestion prompt must not be blank");
            }
            this.prompt = value;
            return this;
        }

        /** How much of the answer the model is shown (default 4000 characters). */
        public Builder maxAnswerChars(int value) {
            if (value < 100) {
                throw ChatException.configuration("maxAnswerChars must be at least 100, got " + value);
            }
            this.maxAnswerChars = value;
            return this;
        }

        public ModelSuggestions build() {
            return new ModelSuggestions(this);
        }
    }
}
