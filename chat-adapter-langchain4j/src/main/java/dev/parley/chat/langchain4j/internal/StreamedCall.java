package dev.parley.chat.langchain4j.internal;

import dev.langchain4j.agent.tool.ToolExecutionRequest;
import dev.langchain4j.data.message.AiMessage;
import dev.langchain4j.model.chat.response.ChatResponse;
import dev.langchain4j.model.chat.response.CompleteToolCall;
import dev.langchain4j.model.chat.response.PartialResponse;
import dev.langchain4j.model.chat.response.PartialResponseContext;
import dev.langchain4j.model.chat.response.PartialThinking;
import dev.langchain4j.model.chat.response.PartialThinkingContext;
import dev.langchain4j.model.chat.response.PartialToolCall;
import dev.langchain4j.model.chat.response.PartialToolCallContext;
import dev.langchain4j.model.chat.response.StreamingChatResponseHandler;
import dev.langchain4j.model.chat.response.StreamingHandle;
import dev.langchain4j.model.output.FinishReason;
import dev.parley.chat.agent.ModelCall;
import dev.parley.chat.agent.ModelListener;
import dev.parley.chat.agent.ModelResponse;
import dev.parley.chat.agent.ToolCall;
import dev.parley.chat.model.TokenUsage;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * One streamed call: relays LangChain4j's callbacks to a {@link ModelListener} and cancels through the
 * {@link StreamingHandle} the model hands over with its streamed pieces.
 *
 * <p>The listener gets one terminal signal at most (LangChain4j may report an error and then complete, for
 * instance when a stream breaks off), and nothing after {@link #cancel()}. Tool calls a provider streams
 * without an id (Gemini, Ollama) get one of ours, the same for every piece of the call and in the response.
 */
public final class StreamedCall implements StreamingChatResponseHandler, ModelCall {
    private final ModelListener listener;
    private final String idPrefix = "call_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12) + "_";
    private final AtomicBoolean ended = new AtomicBoolean();
    private final Map<Integer, String> ids = new ConcurrentHashMap<>();
    private final Map<Integer, ToolCall> completeCalls = new TreeMap<>();
    private final StringBuilder text = new StringBuilder();
    private volatile boolean cancelled;
    private volatile @Nullable StreamingHandle handle;
    private boolean thought;

    public StreamedCall(ModelListener listener) {
        this.listener = listener;
    }

    @Override
    public void cancel() {
        cancelled = true;
        StreamingHandle known = handle;
        if (known != null) {
            known.cancel();
        }
    }

    @Override
    public void onPartialResponse(PartialResponse partialResponse, PartialResponseContext context) {
        if (live(context.streamingHandle())) {
            relayText(partialResponse.text());
        }
    }

    @Override
    public void onPartialResponse(String partialResponse) {
        if (live(null)) {
            relayText(partialResponse);
        }
    }

    @Override
    public void onPartialThinking(PartialThinking partialThinking, PartialThinkingContext context) {
        if (live(context.streamingHandle())) {
            relayThinking(partialThinking.text());
        }
    }

    @Override
    public void onPartialThinking(PartialThinking partialThinking) {
        if (live(null)) {
            relayThinking(partialThinking.text());
        }
    }

    @Override
    public void onPartialToolCall(PartialToolCall partialToolCall, PartialToolCallContext context) {
        if (live(context.streamingHandle())) {
            relayToolCall(partialToolCall);
        }
    }

    @Override
    public void onPartialToolCall(PartialToolCall partialToolCall) {
        if (live(null)) {
            relayToolCall(partialToolCall);
        }
    }

    @Override
    public void onCompleteToolCall(CompleteToolCall completeToolCall) {
        if (live(null)) {
            completeCalls.put(completeToolCall.index(),
                    toToolCall(completeToolCall.index(), completeToolCall.toolExecutionRequest()));
        }
    }

    @Override
    public void onCompleteResponse(ChatResponse completeResponse) {
        if (!live(null) || !ended.compareAndSet(false, true)) {
            return;
        }
        AiMessage message = completeResponse.aiMessage();
        if (text.isEmpty() && message != null && message.text() != null && !message.text().isEmpty()) {
            relayText(message.text());
        }
        if (!thought && message != null && message.thinking() != null && !message.thinking().isEmpty()) {
            relayThinking(message.thinking());
        }
        listener.onComplete(new ModelResponse(text.toString(), toolCalls(message), usage(completeResponse),
                finishReason(completeResponse.finishReason())));
    }

    @Override
    public void onError(Throwable error) {
        if (!cancelled && ended.compareAndSet(false, true)) {
            listener.onError(Failures.of(error));
        }
    }

    /** Keeps the model's handle, and cancels through it if the call was cancelled before it came. */
    private boolean live(@Nullable StreamingHandle given) {
        if (given != null && handle == null) {
            handle = given;
        }
        if (cancelled) {
            if (given != null) {
                given.cancel();
            }
            return false;
        }
        return !ended.get();
    }

    private void relayText(String delta) {
        text.append(delta);
        listener.onText(delta);
    }

    private void relayThinking(String delta) {
        thought = true;
        listener.onThinking(delta);
    }

    private void relayToolCall(PartialToolCall partial) {
        listener.onToolCallDelta(partial.index(), idOf(partial.index(), partial.id()), partial.name(),
                partial.partialArguments());
    }

    private String idOf(int index, @Nullable String given) {
        return ids.computeIfAbsent(index, i -> given != null && !given.isBlank() ? given : idPrefix + i);
    }

    private ToolCall toToolCall(int index, ToolExecutionRequest request) {
        String arguments = request.arguments() == null || request.arguments().isBlank() ? "{}" : request.arguments();
        return new ToolCall(idOf(index, request.id()), request.name(), arguments);
    }

    /** The response's calls (in the model's order), else the ones completed while streaming. */
    private List<ToolCall> toolCalls(@Nullable AiMessage message) {
        if (message == null || !message.hasToolExecutionRequests()) {
            return List.copyOf(completeCalls.values());
        }
        List<ToolCall> calls = new ArrayList<>();
        List<ToolExecutionRequest> requests = message.toolExecutionRequests();
        for (int i = 0; i < requests.size(); i++) {
            calls.add(toToolCall(i, requests.get(i)));
        }
        return calls;
    }

    private static @Nullable TokenUsage usage(ChatResponse response) {
        dev.langchain4j.model.output.TokenUsage usage = response.tokenUsage();
        if (usage == null || (usage.inputTokenCount() == null && usage.outputTokenCount() == null)) {
            return null;
        }
        long input = usage.inputTokenCount() == null ? 0 : usage.inputTokenCount();
        long output = usage.outputTokenCount() == null ? 0 : usage.outputTokenCount();
        long total = usage.totalTokenCount() == null ? input + output : usage.totalTokenCount();
        return new TokenUsage(input, output, total);
    }

    private static @Nullable String finishReason(@Nullable FinishReason reason) {
        if (reason == null) {
            return null;
        }
        return switch (reason) {
            case STOP -> "stop";
            case LENGTH -> "length";
            case TOOL_EXECUTION -> "tool_calls";
            case CONTENT_FILTER -> "content_filter";
            case OTHER -> "other";
        };
    }
}
