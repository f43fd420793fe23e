package dev.parley.chat.agent.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.RunErrorCode;
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
import dev.parley.chat.runtime.RunProgress;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.StreamPublisher;
import dev.parley.chat.runtime.ToolResult;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
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
 *
 * <p>A response without a finish reason (a stream that ended without saying why: a server that died
 * mid-answer) fails the run, the partial text kept; one cut at the model's length limit ends it SUCCEEDED
 * with a {@code warn} status line saying so and the answer marked truncated ({@code RunFinished.truncated}),
 * and its unfinished tool calls are not run. Each tool call is
 * handed to the engine under an execution id unique within the run, even where the model repeats an id.
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
    /** Execution ids handed to the engine so far: a model may repeat a call id in a later call. */
    private final Set<String> executionIds = new HashSet<>();
    private boolean wroteText;

    private final @Nullable RunProgress resumed;

    /**
     * @param resumed what the run did before the host restarted, when it is continued from the store: the
     *     loop goes on from there, waiting for the results of its open calls; null for a new run
     */
    public AgentRun(ModelClient client, RunRequest request, @Nullable String systemPrompt, int budget,
            StreamPublisher.Emitter<AgentStreamEvent> out, @Nullable RunProgress resumed) {
        this.client = client;
        this.request = request;
        this.systemPrompt = systemPrompt;
        this.budget = budget;
        this.out = out;
        this.offered = request.hostTools().stream().map(HostToolSpec::name).collect(Collectors.toSet());
        this.resumed = resumed;
    }

    /**
     * The engine stopped the run: the loop's thread, which waits on this, cancels the call in flight and ends
     * the run CANCELLED.
     */
    public void cancel() {
        cancelled.complete(null);
    }

    /** The engine's answer to one of the model's tool calls. */
    public void toolResult(ToolResult result) {
        results.computeIfAbsent(result.executionId(), id -> new CompletableFuture<>()).complete(result);
    }

    /** Plays the loop to its end; runs on the run's own thread and blocks it. */
    public void play() {
        try {
            loop();
        } catch (ChatException e) {
            log.warn("Run {}: the agent loop failed: {}", request.runId(), e.getMessage());
            out.emit(new AgentStreamEvent.RunFailed(RunErrorCode.of(e.code()).name(), message(e)));
        } catch (RuntimeException e) {
            log.warn("Run {}: the agent loop failed", request.runId(), e);
            out.emit(new AgentStreamEvent.RunFailed(RunErrorCode.RUNTIME_FAILED.name(), message(e)));
        } finally {
            out.complete();
        }
    }

    private void loop() {
        AttachedFiles files = new AttachedFiles(request.attachmentContent(), client.attachmentSupport());
        List<ModelMessage> messages = new ArrayList<>(Conversations.toModel(request.history().messages(), files));
        messages.add(files.user(request.userMessage(), request.attachments()));
        int firstCall = 1;
        if (resumed != null) {
            Conversations.Resumed before = Conversations.resumed(resumed);
            executionIds.addAll(before.executionIds());
            wroteText = !resumed.text().isEmpty();
            messages.addAll(before.messages());
            if (!before.lastCalls().isEmpty()) {
                before.lastResults().forEach((id, result) -> toolResult(
                        new ToolResult(request.runId(), id, result.result(), result.error())));
                List<ModelMessage> answered = awaitResults(before.lastCalls(),
                        before.lastCalls().stream().map(ToolCall::id).toList());
                if (answered == null) {
                    endCancelled();
                    return;
                }
                messages.add(new ModelMessage.Assistant(before.lastText(), before.lastCalls()));
                messages.addAll(answered);
            }
            firstCall = before.modelCalls() + 1;
        }
        TokenUsage total = resumed != null ? resumed.usage() : null;
        for (int call = firstCall; ; call++) {
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
            if (response.finishReason() == null || response.finishReason().isBlank()) {
                out.emit(new AgentStreamEvent.RunFailed(RunErrorCode.RUNTIME_UNAVAILABLE.name(),
                        "The model's answer broke off: its stream ended without a finish reason"));
                return;
            }
            if (isLengthLimit(response.finishReason())) {
                out.emit(new AgentStreamEvent.StatusUpdate(request.runId() + ":truncated", "warn",
                        "The answer was cut off at the model's length limit (its maximum output tokens)."
                                + (response.toolCalls().isEmpty() ? "" : " Its unfinished tool calls were not run.")));
                closeUnfinished(outcome.started);
                out.emit(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null, true));
                return;
            }
            if (response.toolCalls().isEmpty()) {
                out.emit(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
                return;
            }
            List<ModelMessage> answered = runTools(response.toolCalls(), outcome.started, call);
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

    /**
     * A tool call as it streams: announced once its id and name are known, under an execution id of the run's
     * ({@link #executionIdFor}); the model's own id stays what the model is shown.
     */
    private static final class StreamingCall {
        @Nullable String id;
        @Nullable String name;
        @Nullable String executionId;
        final StringBuilder pending = new StringBuilder();
        boolean announced;
        boolean matched;
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
                    streaming.executionId = executionIdFor(streaming.id, call);
                    out.emit(new AgentStreamEvent.ToolCallStart(toolMessageId(streaming.executionId),
                            streaming.executionId, streaming.name, streaming.pending.toString()));
                    streaming.pending.setLength(0);
                } else if (streaming.announced && !argumentsDelta.isEmpty()) {
                    out.emit(new AgentStreamEvent.ToolCallArgs(streaming.executionId, argumentsDelta));
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
        ModelCall inFlight;
        try {
            inFlight = client.stream(modelRequest, listener);
        } catch (RuntimeException e) {
            outcome.failure = e;
            return outcome;
        }
        CompletableFuture.anyOf(done, cancelled).join();
        if (!done.isDone()) {
            inFlight.cancel();
        }
        return outcome;
    }

    /**
     * Announces the calls the stream did not (a client without partial calls), ends each, answers calls of
     * tools nobody offered, and waits for the engine's results. Each call is handed to the engine under its
     * execution id (see {@link #executionIdFor}) and its result goes back to the model under the model's own id.
     * Returns the results in call order, or null if the run was cancelled meanwhile.
     */
    private @Nullable List<ModelMessage> runTools(List<ToolCall> calls, Map<Integer, StreamingCall> started, int call) {
        List<String> executions = new ArrayList<>();
        for (ToolCall toolCall : calls) {
            StreamingCall streamed = announcedAs(toolCall, started);
            String executionId;
            if (streamed != null) {
                executionId = streamed.executionId;
            } else {
                executionId = executionIdFor(toolCall.id(), call);
                out.emit(new AgentStreamEvent.ToolCallStart(toolMessageId(executionId), executionId, toolCall.name(),
                        toolCall.arguments()));
            }
            executions.add(executionId);
            results.computeIfAbsent(executionId, id -> new CompletableFuture<>());
            out.emit(new AgentStreamEvent.ToolCallEnd(executionId));
            if (!offered.contains(toolCall.name())) {
                String error = "no tool named " + toolCall.name() + " is offered";
                out.emit(new AgentStreamEvent.ToolCallResult(request.runId() + ":result:" + executionId, executionId,
                        error, true));
                toolResult(new ToolResult(request.runId(), executionId, error, true));
            }
        }
        return awaitResults(calls, executions);
    }

    /**
     * Waits for the engine's result of each call (handed to it under the execution id at the same index), and
     * returns them in call order under the model's ids; null if the run was cancelled meanwhile.
     */
    private @Nullable List<ModelMessage> awaitResults(List<ToolCall> calls, List<String> executions) {
        List<ModelMessage> answered = new ArrayList<>();
        for (int i = 0; i < calls.size(); i++) {
            CompletableFuture<ToolResult> result = results.computeIfAbsent(executions.get(i),
                    id -> new CompletableFuture<>());
            CompletableFuture.anyOf(result, cancelled).join();
            if (cancelled.isDone()) {
                return null;
            }
            ToolResult got = getNow(result);
            ToolCall toolCall = calls.get(i);
            answered.add(new ModelMessage.ToolResult(toolCall.id(), toolCall.name(), got.result(), got.error()));
        }
        return answered;
    }

    /** The streamed call {@code toolCall} was announced as: the first announced one with its id not yet matched. */
    private static @Nullable StreamingCall announcedAs(ToolCall toolCall, Map<Integer, StreamingCall> started) {
        return started.entrySet().stream().sorted(Map.Entry.comparingByKey()).map(Map.Entry::getValue)
                .filter(s -> s.announced && !s.matched && toolCall.id().equals(s.id)).findFirst()
                .map(s -> {
                    s.matched = true;
                    return s;
                }).orElse(null);
    }

    /**
     * The execution id the engine sees for a call the model named {@code modelId} in model call {@code call}:
     * the model's id the first time the run sees it, so stored ids stay the model's; for an id the model
     * repeats (some servers number calls per response, some models echo an earlier id) the id with the model
     * call's number, {@code call_1-2}, so that the engine runs it again instead of handing back the earlier
     * result. Unique within the run.
     */
    private String executionIdFor(String modelId, int call) {
        String candidate = modelId;
        for (int n = 0; !executionIds.add(candidate); n++) {
            candidate = modelId + "-" + call + (n == 0 ? "" : "-" + n);
        }
        return candidate;
    }

    /** Ends the tool calls a cut-off answer announced, with an error result: they are not run. */
    private void closeUnfinished(Map<Integer, StreamingCall> started) {
        for (StreamingCall streamed : started.values()) {
            if (streamed.announced) {
                out.emit(new AgentStreamEvent.ToolCallResult(request.runId() + ":result:" + streamed.executionId,
                        streamed.executionId, "not run: the model's answer was cut off at its length limit", true));
            }
        }
    }

    /** OpenAI-compatible servers say {@code length}; Anthropic and Bedrock {@code max_tokens}; Gemini {@code MAX_TOKENS}. */
    private static boolean isLengthLimit(String finishReason) {
        String reason = finishReason.toLowerCase(Locale.ROOT);
        return reason.equals("length") || reason.equals("max_tokens") || reason.equals("max_output_tokens");
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
            return new AgentStreamEvent.RunFailed(failure.code().name(), message(failure), failure.retryAfterSeconds());
        }
        return new AgentStreamEvent.RunFailed(RunErrorCode.RUNTIME_FAILED.name(), message(error));
    }

    private static String message(Throwable error) {
        return error.getMessage() != null ? error.getMessage() : error.getClass().getSimpleName();
    }

    private static TokenUsage add(@Nullable TokenUsage total, TokenUsage more) {
        return total == null ? more : new TokenUsage(total.inputTokens() + more.inputTokens(),
                total.outputTokens() + more.outputTokens(), total.totalTokens() + more.totalTokens());
    }
}
