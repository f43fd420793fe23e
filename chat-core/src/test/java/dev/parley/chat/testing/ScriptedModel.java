package dev.parley.chat.testing;

import dev.parley.chat.agent.ModelCall;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.agent.ModelFailure;
import dev.parley.chat.agent.ModelListener;
import dev.parley.chat.agent.ModelRequest;
import dev.parley.chat.agent.ModelResponse;
import dev.parley.chat.agent.ToolCall;
import dev.parley.chat.model.TokenUsage;
import dev.parley.chat.runtime.AttachmentSupport;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

/**
 * A model for agent-loop tests: each call plays the {@link Reply} its script chooses for the request, on a
 * thread of its own, streaming text, thinking and tool calls in the pieces given. Records every request.
 */
public final class ScriptedModel implements ModelClient {
    private final Function<ModelRequest, Reply> script;
    private final List<ModelRequest> requests = new CopyOnWriteArrayList<>();
    private final AtomicInteger cancels = new AtomicInteger();
    private volatile AttachmentSupport attachmentSupport = AttachmentSupport.NONE;

    private ScriptedModel(Function<ModelRequest, Reply> script) {
        this.script = script;
    }

    /** Plays the replies in order, one per call (the last one again when they run out). */
    public static ScriptedModel replying(Reply... replies) {
        AtomicInteger next = new AtomicInteger();
        return new ScriptedModel(request -> replies[Math.min(next.getAndIncrement(), replies.length - 1)]);
    }

    /** Chooses each call's reply from its request. */
    public static ScriptedModel choosing(Function<ModelRequest, Reply> script) {
        return new ScriptedModel(script);
    }

    public List<ModelRequest> requests() {
        return List.copyOf(requests);
    }

    /** How many calls were cancelled. */
    public int cancels() {
        return cancels.get();
    }

    /** Makes the model take these attachments; returns this. */
    public ScriptedModel withAttachmentSupport(AttachmentSupport support) {
        this.attachmentSupport = support;
        return this;
    }

    @Override
    public AttachmentSupport attachmentSupport() {
        return attachmentSupport;
    }

    @Override
    public ModelCall stream(ModelRequest request, ModelListener listener) {
        requests.add(request);
        Reply reply = script.apply(request);
        CountDownLatch stop = new CountDownLatch(1);
        Thread thread = new Thread(() -> reply.play(listener, stop), "scripted-model");
        thread.setDaemon(true);
        thread.start();
        return () -> {
            cancels.incrementAndGet();
            stop.countDown();
        };
    }

    /** One call's behaviour: steps played in order. */
    public static final class Reply {
        private interface Step {
            /** @return false to stop playing */
            boolean play(ModelListener listener, CountDownLatch stop, StringBuilder text, List<ToolCall> calls);
        }

        private final List<Step> steps = new ArrayList<>();
        private TokenUsage usage;
        private ModelFailure failure;
        private boolean finishGiven;
        private String finishReason;

        public static Reply reply() {
            return new Reply();
        }

        /** Streams {@code pieces} of text. */
        public Reply text(String... pieces) {
            steps.add((listener, stop, text, calls) -> {
                for (String piece : pieces) {
                    listener.onText(piece);
                    text.append(piece);
                }
                return true;
            });
            return this;
        }

        public Reply thinking(String... pieces) {
            steps.add((listener, stop, text, calls) -> {
                for (String piece : pieces) {
                    listener.onThinking(piece);
                }
                return true;
            });
            return this;
        }

        /** A tool call whose arguments stream in {@code argumentPieces}. */
        public Reply toolCall(int index, String id, String name, String... argumentPieces) {
            steps.add((listener, stop, text, calls) -> {
                StringBuilder args = new StringBuilder();
                for (int i = 0; i < argumentPieces.length; i++) {
                    listener.onToolCallDelta(index, i == 0 ? id : null, i == 0 ? name : null, argumentPieces[i]);
                    args.append(argumentPieces[i]);
                }
                calls.add(new ToolCall(id, name, args.toString()));
                return true;
            });
            return this;
        }

        /** A tool call the client reports only complete (no partial pieces). */
        public Reply completeToolCall(String id, String name, String arguments) {
            steps.add((listener, stop, text, calls) -> {
                calls.add(new ToolCall(id, name, arguments));
                return true;
            });
            return this;
        }

        /**
         * The finish reason the response reports (default {@code stop}, or {@code tool_calls} with tool calls);
         * null for a stream that ended without one.
         */
        public Reply finish(String reason) {
            this.finishGiven = true;
            this.finishReason = reason;
            return this;
        }

        public Reply usage(long input, long output) {
            this.usage = new TokenUsage(input, output, input + output);
            return this;
        }

        /** Waits until the call is cancelled, then ends without a response. */
        public Reply hangUntilCancelled() {
            steps.add((listener, stop, text, calls) -> {
                try {
                    stop.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                listener.onError(new ModelFailure(ModelFailure.Kind.FAILED, "cancelled"));
                return false;
            });
            return this;
        }

        /** Fails the call after what was streamed before. */
        public Reply fail(ModelFailure.Kind kind, String message) {
            return fail(new ModelFailure(kind, message));
        }

        /** Fails the call with {@code failure} after what was streamed before. */
        public Reply fail(ModelFailure failure) {
            this.failure = failure;
            return this;
        }

        void play(ModelListener listener, CountDownLatch stop) {
            StringBuilder text = new StringBuilder();
            List<ToolCall> calls = new ArrayList<>();
            for (Step step : steps) {
                if (!step.play(listener, stop, text, calls)) {
                    return;
                }
            }
            if (failure != null) {
                listener.onError(failure);
                return;
            }
            String reason = finishGiven ? finishReason : calls.isEmpty() ? "stop" : "tool_calls";
            listener.onComplete(new ModelResponse(text.toString(), calls, usage, reason));
        }
    }
}
