package dev.parley.chat.springai.internal;

import dev.parley.chat.agent.ModelCall;
import dev.parley.chat.agent.ModelFailure;
import dev.parley.chat.agent.ModelListener;
import dev.parley.chat.agent.ModelResponse;
import dev.parley.chat.agent.ToolCall;
import dev.parley.chat.model.TokenUsage;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;
import org.springframework.ai.chat.messages.AssistantMessage;
import org.springframework.ai.chat.metadata.Usage;
import org.springframework.ai.chat.model.ChatResponse;
import org.springframework.ai.chat.model.Generation;
import reactor.core.publisher.BaseSubscriber;

/**
 * One streamed call: its {@link #subscriber()} relays a {@code ChatModel}'s responses to a {@link ModelListener},
 * and {@link #cancel()} disposes the subscription. Reactor serialises the signals; nothing is relayed after a
 * cancel, and the listener gets one terminal signal at most.
 */
public final class StreamedCall implements ModelCall {
    /** Where Spring AI's OpenAI model puts the reasoning so far ({@code reasoning_content} on the wire). */
    static final String REASONING = "reasoningContent";

    private final ModelListener listener;
    private final String idPrefix = "call_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + "_";
    private final AtomicBoolean ended = new AtomicBoolean();
    private final StringBuilder text = new StringBuilder();
    private final List<ToolCall> calls = new ArrayList<>();
    private String reasoning = "";
    private @Nullable TokenUsage usage;
    private @Nullable String finishReason;
    private volatile boolean cancelled;
    private final BaseSubscriber<ChatResponse> subscriber = new BaseSubscriber<>() {
        @Override
        protected void hookOnNext(ChatResponse response) {
            StreamedCall.this.relay(response);
        }

        @Override
        protected void hookOnComplete() {
            StreamedCall.this.complete();
        }

        @Override
        protected void hookOnError(Throwable error) {
            StreamedCall.this.fail(Failures.of(error));
        }
    };

    public StreamedCall(ModelListener listener) {
        this.listener = listener;
    }

    /** What to subscribe to the model's responses with; it asks for all of them. */
    public BaseSubscriber<ChatResponse> subscriber() {
        return subscriber;
    }

    @Override
    public void cancel() {
        cancelled = true;
        subscriber.dispose();
    }

    /** Ends the call with {@code failure}, unless it was cancelled or has ended. */
    public void fail(ModelFailure failure) {
        if (!cancelled && ended.compareAndSet(false, true)) {
            listener.onError(failure);
        }
    }

    private void relay(ChatResponse response) {
        if (cancelled || ended.get()) {
            return;
        }
        Generation generation = response.getResults().isEmpty() ? null : response.getResults().get(0);
        if (generation != null) {
            relay(generation);
        }
        Usage reported = response.getMetadata() == null ? null : response.getMetadata().getUsage();
        if (reported != null && (positive(reported.getPromptTokens()) || positive(reported.getCompletionTokens()))) {
            long input = count(reported.getPromptTokens());
            long output = count(reported.getCompletionTokens());
            long total = positive(reported.getTotalTokens()) ? reported.getTotalTokens() : input + output;
            usage = new TokenUsage(input, output, total);
        }
    }

    private void complete() {
        if (!cancelled && ended.compareAndSet(false, true)) {
            listener.onComplete(new ModelResponse(text.toString(), calls, usage, finishReason));
        }
    }

    private void relay(Generation generation) {
        AssistantMessage message = generation.getOutput();
        Object soFar = message.getMetadata().get(REASONING);
        if (soFar instanceof String thought && !thought.isEmpty()) {
            String delta = thought.startsWith(reasoning) ? thought.substring(reasoning.length()) : thought;
            reasoning = thought.startsWith(reasoning) ? thought : reasoning + thought;
            if (!delta.isEmpty()) {
                listener.onThinking(delta);
            }
        }
        String piece = message.getText();
        if (piece != null && !piece.isEmpty()) {
            text.append(piece);
            listener.onText(piece);
        }
        for (AssistantMessage.ToolCall call : message.getToolCalls()) {
            int index = calls.size();
            String id = call.id() == null || call.id().isBlank() ? idPrefix + index : call.id();
            String arguments = call.arguments() == null || call.arguments().isBlank() ? "{}" : call.arguments();
            calls.add(new ToolCall(id, call.name(), arguments));
            listener.onToolCallDelta(index, id, call.name(), arguments);
        }
        String reason = generation.getMetadata().getFinishReason();
        if (reason != null && !reason.isBlank()) {
            finishReason = reason.toLowerCase(Locale.ROOT);
        }
    }

    private static boolean positive(@Nullable Integer count) {
        return count != null && count > 0;
    }

    private static long count(@Nullable Integer value) {
        return value == null ? 0 : value;
    }
}
