package dev.parley.chat.agent.internal;

import dev.parley.chat.agent.ModelCall;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.agent.ModelFailure;
import dev.parley.chat.agent.ModelListener;
import dev.parley.chat.agent.ModelMessage;
import dev.parley.chat.agent.ModelRequest;
import dev.parley.chat.agent.ModelResponse;
import dev.parley.chat.agent.ToolCall;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.TokenUsage;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.StreamPublisher;
import dev.parley.chat.runtime.ToolResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One run of the agent loop, on a thread of its own: call the model, stream what it says, have the engine
 * answer its tool calls, feed the results back, call again — until an answer, the iteration budget, a
 * cancel (the call in flight is cancelled, the partial text kept) or an error. Usage is summed over calls.
 */
public final class AgentRun {
    private static final Logger log = LoggerFactory.getLogger(AgentRun.class);

    private final ModelClient client;
    private final RunRequest request;
    private final @Nullable String systemPrompt;
    private final int budget;
    private final StreamPublisher.Emitter<AgentStreamEvent> out;
    private final Set<String> offered;
    private final Map<String, CompletableFuture<ToolResult>> results = new ConcurrentHashMap<>();
    private final CompletableFuture<Void> cancelled = new CompletableFuture<>();
    private volatile @Nullable ModelCall inFlight;
    private boolean wroteText;

    public AgentRun(ModelClient client, RunRequest request, @Nullable String systemPrompt, int budget,
            StreamPublisher.Emitter<AgentStreamEvent> out) {
        this.client = client;
        this.request = request;
        this.systemPrompt = systemPrompt;
        this.budget = budget;
        this.out = out;
        this.offered = request.hostTools().stream().map(HostToolSpec::name).collect(Collectors.toSet());
    }

    /** The engine stopped the run: the call in flight is cancelled and the loop ends CANCELLED. */
    public void cancel() {
        cancelled.complete(null);
        ModelCall call = inFlight;
        if (call != null) {
            call.cancel();
        }
    }

    /** The engine's answer to one of the model's tool calls. */
    public void toolResult(ToolResult result) {
        results.computeIfAbsent(result.executionId(), id -> new CompletableFuture<>()).complete(result);
    }

    /** Plays the loop to its end; runs on the run's own thread and blocks it. */
    public void play() {
        try {
            loop();
        } catch (RuntimeException e) {
            log.warn("Run {}: the agent loop failed", request.runId(), e);
            out.emit(new AgentStreamEvent.RunFailed("RUNTIME_FAILED", message(e)));
        } finally {
            out.complete();
        }
    }

    private void loop() {
        List<ModelMessage> messages = new ArrayList<>(Conversations.toModel(request.history().messages()));
        messages.add(new ModelMessage.User(request.userMessage()));
        TokenUsage total = null;
        for (int call = 1; ; call++) {
            if (cancelled.isDone()) {
                endCancelled();
                return;
            }
            if (call > budget) {
                out.emit(new AgentStreamEvent.StatusUpdate(request.runId() + ":budget", "warn",
                        "The iteration budget of " + budget + " model calls is spent."));
                out.emit(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
                return;
            }
            Outcome outcome = callModel(new ModelRequest(request.modelId(), systemPrompt, messages, request.hostTools()),
                    call);
            if (outcome.response != null && outcome.response.usage() != null) {
                total = add(total, outcome.response.usage());
                out.emit(new AgentStreamEvent.Usage(total.inputTokens(), total.outputTokens(), total.totalTokens()));
            }
            if (cancelled.isDone()) {
                endCancelled();
                return;
            }
            if (outcome.failure != null) {
                out.emit(failure(outcome.failure));
                return;
            }
            ModelResponse response = outcome.response;
            if (response.toolCalls().isEmpty()) {
                out.emit(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
                return;
            }
            List<ModelMessage> answered = runTools(response.toolCalls(), outcome.started);
            if (answered == null) {
                endCancelled();
                return;
            }
            messages.add(new ModelMessage.Assistant(response.text(), response.toolCalls()));
            messages.addAll(answered);
        }
    }

    /** What one model call came to: its response, or why it failed; the tool calls already announced. */
    private static final class Outcome {
        @Nullable ModelResponse response;
        @Nullable Throwable failure;
        final Map<Integer, StreamingCall> started = new HashMap<>();
    }

    /** A tool call as it streams: announced once its id and name are known. */
    private static final class StreamingCall {
        @Nullable String id;
        @Nullable String name;
        final StringBuilder pending = new StringBuilder();
        boolean announced;
    }

    private Outcome callModel(ModelRequest modelRequest, int call) {
        Outcome outcome = new Outcome();
        CompletableFuture<Void> done = new CompletableFuture<>();
        String thinkingId = request.runId() + ":thinking:" + call;
        ModelListener listener = new ModelListener() {
            private boolean textInThisCall;

            @Override
            public void onText(String delta) {
                if (delta.isEmpty()) {
                    return;
                }
                if (!textInThisCall && wroteText) {
                    out.emit(new AgentStreamEvent.TextDelta(request.assistantMessageId(), "\n\n"));
                }
                textInThisCall = true;
                wroteText = true;
                out.emit(new AgentStreamEvent.TextDelta(request.assistantMessageId(), delta));
            }

            @Override
            public void onThinking(String delta) {
                if (!delta.isEmpty()) {
                    out.emit(new AgentStreamEvent.ThinkingDelta(thinkingId, delta));
                }
            }

            @Override
            public void onToolCallDelta(int index, @Nullable String id, @Nullable String name, String argumentsDelta) {
                StreamingCall streaming = outcome.started.computeIfAbsent(index, i -> new StreamingCall());
                if (id != null && streaming.id == null) {
                    streaming.id = id;
                }
                if (name != null && streaming.name == null) {
                    streaming.name = name;
                }
                streaming.pending.append(argumentsDelta);
                if (!streaming.announced && streaming.id != null && streaming.name != null) {
                    streaming.announced = true;
                    out.emit(new AgentStreamEvent.ToolCallStart(toolMessageId(streaming.id), streaming.id, streaming.name,
                            streaming.pending.toString()));
                    streaming.pending.setLength(0);
                } else if (streaming.announced && !argumentsDelta.isEmpty()) {
                    out.emit(new AgentStreamEvent.ToolCallArgs(streaming.id, argumentsDelta));
                    streaming.pending.setLength(0);
                }
            }

            @Override
            public void onComplete(ModelResponse response) {
                outcome.response = response;
                done.complete(null);
            }

            @Override
            public void onError(Throwable error) {
                outcome.failure = error;
                done.complete(null);
            }
        };
        try {
            inFlight = client.stream(modelRequest, listener);
        } catch (RuntimeException e) {
            outcome.failure = e;
            return outcome;
        }
        if (cancelled.isDone()) {
            inFlight.cancel();
        }
        CompletableFuture.anyOf(done, cancelled).join();
        inFlight = null;
        return outcome;
    }

    /**
     * Announces the calls the stream did not (a client without partial calls), ends each, answers calls of
     * tools nobody offered, and waits for the engine's results. Returns the results in call order, or null if
     * the run was cancelled meanwhile.
     */
    private @Nullable List<ModelMessage> runTools(List<ToolCall> calls, Map<Integer, StreamingCall> started) {
        Set<String> announced = started.values().stream().filter(s -> s.announced).map(s -> s.id)
                .collect(Collectors.toSet());
        Map<String, CompletableFuture<ToolResult>> waiting = new LinkedHashMap<>();
        for (ToolCall call : calls) {
            if (!announced.contains(call.id())) {
                out.emit(new AgentStreamEvent.ToolCallStart(toolMessageId(call.id()), call.id(), call.name(),
                        call.arguments()));
            }
            waiting.put(call.id(), results.computeIfAbsent(call.id(), id -> new CompletableFuture<>()));
            out.emit(new AgentStreamEvent.ToolCallEnd(call.id()));
            if (!offered.contains(call.name())) {
                String error = "no tool named " + call.name() + " is offered";
                out.emit(new AgentStreamEvent.ToolCallResult(request.runId() + ":result:" + call.id(), call.id(), error,
                        true));
                toolResult(new ToolResult(request.runId(), call.id(), error, true));
            }
        }
        List<ModelMessage> answered = new ArrayList<>();
        for (ToolCall call : calls) {
            CompletableFuture<ToolResult> result = waiting.get(call.id());
            CompletableFuture.anyOf(result, cancelled).join();
            if (cancelled.isDone()) {
                return null;
            }
            ToolResult got = getNow(result);
            answered.add(new ModelMessage.ToolResult(call.id(), call.name(), got.result(), got.error()));
        }
        return answered;
    }

    private static ToolResult getNow(CompletableFuture<ToolResult> result) {
        try {
            return result.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }

    private String toolMessageId(String callId) {
        return request.runId() + ":tool:" + callId;
    }

    private void endCancelled() {
        out.emit(new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "stopped on request"));
    }

    private static AgentStreamEvent failure(Throwable error) {
        if (error instanceof ModelFailure failure) {
            return new AgentStreamEvent.RunFailed(failure.kind().code(), message(failure));
        }
        return new AgentStreamEvent.RunFailed("RUNTIME_FAILED", message(error));
    }

    private static String message(Throwable error) {
        return error.getMessage() != null ? error.getMessage() : error.getClass().getSimpleName();
    }

    private static TokenUsage add(@Nullable TokenUsage total, TokenUsage more) {
        return total == null ? more : new TokenUsage(total.inputTokens() + more.inputTokens(),
                total.outputTokens() + more.outputTokens(), total.totalTokens() + more.totalTokens());
    }
}
