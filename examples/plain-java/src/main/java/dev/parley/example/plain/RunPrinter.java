package dev.parley.example.plain;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.AgentStreamEvent.InputRequested;
import dev.parley.chat.event.AgentStreamEvent.InputResolved;
import dev.parley.chat.event.AgentStreamEvent.RunFailed;
import dev.parley.chat.event.AgentStreamEvent.RunFinished;
import dev.parley.chat.event.AgentStreamEvent.StatusUpdate;
import dev.parley.chat.event.AgentStreamEvent.TextDelta;
import dev.parley.chat.event.AgentStreamEvent.TextFinal;
import dev.parley.chat.event.AgentStreamEvent.ThinkingDelta;
import dev.parley.chat.event.AgentStreamEvent.ToolCallArgs;
import dev.parley.chat.event.AgentStreamEvent.ToolCallEnd;
import dev.parley.chat.event.AgentStreamEvent.ToolCallResult;
import dev.parley.chat.event.AgentStreamEvent.ToolCallStart;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.ApprovalMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.StatusMessage;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.UserMessage;
import java.io.PrintStream;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Flow;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * Prints one run's events as they stream: answer and thinking text inline, tool calls, their results and
 * approvals on their own lines. Approvals are handed to the main thread ({@link #nextApproval}), which asks the
 * person; the printer itself never blocks the engine's delivery thread.
 *
 * <p>The engine calls {@code onNext} on its delivery threads, one signal at a time per subscription.
 */
final class RunPrinter implements Flow.Subscriber<RunEvent> {
    private final PrintStream out;
    private final BlockingQueue<Optional<InputRequested>> approvals = new LinkedBlockingQueue<>();
    /** Tool-call arguments as they stream, by execution id, until the call is complete. */
    private final Map<String, ToolCallStart> calls = new HashMap<>();
    private final Map<String, StringBuilder> arguments = new HashMap<>();
    /** Assistant messages whose text was streamed: their {@code text_final} repeats it. */
    private final Set<String> streamed = new HashSet<>();
    private Line line = Line.NEW;

    /** What the current console line holds. */
    private enum Line { NEW, TEXT, THINKING }

    RunPrinter(PrintStream out) {
        this.out = out;
    }

    /**
     * Waits for the next approval the run asks for.
     *
     * @return the approval, or null once the run has ended (its end printed)
     */
    InputRequested nextApproval() {
        try {
            return approvals.take().orElse(null);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the run was going on", e);
        }
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {
        subscription.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(RunEvent logged) {
        AgentStreamEvent event = logged.event();
        if (event instanceof TextDelta text) {
            inline(Line.TEXT, "agent> ", text.delta());
            streamed.add(text.messageId());
        } else if (event instanceof TextFinal text && !streamed.contains(text.messageId())) {
            inline(Line.TEXT, "agent> ", text.text());
        } else if (event instanceof ThinkingDelta thinking) {
            inline(Line.THINKING, "thinking> ", thinking.delta());
        } else if (event instanceof ToolCallStart start) {
            calls.put(start.executionId(), start);
            arguments.put(start.executionId(), new StringBuilder(start.arguments()));
        } else if (event instanceof ToolCallArgs args && arguments.containsKey(args.executionId())) {
            arguments.get(args.executionId()).append(args.delta());
        } else if (event instanceof ToolCallEnd end && calls.containsKey(end.executionId())) {
            ownLine("  -> " + calls.remove(end.executionId()).name() + " " + arguments.remove(end.executionId()));
        } else if (event instanceof ToolCallResult result) {
            ownLine("  <- " + (result.error() ? "error: " : "") + result.result());
        } else if (event instanceof InputRequested asked && asked.request() instanceof ApprovalRequest approval) {
            ownLine("  ? " + approval.description());
            approvals.add(Optional.of(asked));
        } else if (event instanceof InputResolved resolved) {
            ownLine("  approval " + resolved.outcome().name().toLowerCase(Locale.ROOT)
                    + (resolved.answer() instanceof ApprovalAnswer answer ? ": " + answer.decision().wireName() : ""));
        } else if (event instanceof StatusUpdate status) {
            ownLine("  [" + status.level() + "] " + status.text());
        } else if (event instanceof RunFinished finished) {
            ownLine("(run " + finished.status().name().toLowerCase(Locale.ROOT) + ")");
        } else if (event instanceof RunFailed failed) {
            ownLine("(run failed: " + failed.code() + " " + failed.message() + ")");
        }
    }

    @Override
    public void onError(Throwable failure) {
        ownLine("(lost the run's events: " + failure + ")");
        approvals.add(Optional.empty());
    }

    @Override
    public void onComplete() {
        approvals.add(Optional.empty());
    }

    /** A stored message as the printer shows it while it streams; an answer's steps indented under it. */
    static String describe(Message message) {
        if (message instanceof UserMessage user) {
            return "you> " + user.text();
        } else if (message instanceof AssistantMessage answer) {
            return "agent> " + answer.text();
        } else if (message instanceof ThinkingMessage thinking) {
            return "  thinking> " + thinking.text();
        } else if (message instanceof ActionExecutionMessage call) {
            return "  -> " + call.name() + " " + call.arguments();
        } else if (message instanceof ResultMessage result) {
            return "  <- " + (result.error() ? "error: " : "") + result.result();
        } else if (message instanceof ApprovalMessage approval) {
            return "  ? " + approval.request().description() + ": "
                    + (approval.decision() == null ? approval.outcome() : approval.decision().wireName());
        } else if (message instanceof StatusMessage status) {
            return "  [" + status.level() + "] " + status.text();
        }
        return "  (" + message.kind() + ")";
    }

    /**
     * Text that streams piece by piece: a new line with {@code prompt} when the kind of text changes, its leading
     * white space dropped.
     */
    private void inline(Line kind, String prompt, String piece) {
        if (line != kind) {
            piece = piece.stripLeading();   // the blank line the loop puts between two steps' answer text
            if (piece.isEmpty()) {
                return;
            }
            if (line != Line.NEW) {
                out.println();
            }
            out.print(prompt);
            line = kind;
        }
        out.print(piece);
        out.flush();
    }

    private void ownLine(String text) {
        if (line != Line.NEW) {
            out.println();
            line = Line.NEW;
        }
        out.println(text);
        out.flush();
    }
}
