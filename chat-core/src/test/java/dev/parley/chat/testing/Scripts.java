package dev.parley.chat.testing;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.TodoItem;
import dev.parley.chat.model.TodoStatus;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.runtime.ToolResult;
import java.util.List;

/** Ready-made scenarios for {@link ScriptedRuntime}. */
public final class Scripts {
    private Scripts() {
    }

    /** Thinks, streams {@code answer} word by word, reports usage and succeeds. */
    public static ScriptedRuntime.Script answer(String answer) {
        return (request, p) -> {
            p.thinking("1", "Let me think. ");
            p.thinking("1", "Done.");
            for (String word : answer.split("(?<= )")) {
                p.text(word);
            }
            p.emit(new AgentStreamEvent.Usage(12, 7, 19));
            p.finish();
        };
    }

    /** Echoes the user's message after reporting a runtime session (the request's, or a new one). */
    public static ScriptedRuntime.Script echoWithSession(String newSessionId) {
        return (request, p) -> {
            p.emit(new AgentStreamEvent.RuntimeSession(newSessionId, request.runtimeSessionId() != null));
            p.text("echo: " + request.userMessage());
            p.finish();
        };
    }

    /** A tool call with streamed arguments, its result, a todo list updated twice, then an answer. */
    public static ScriptedRuntime.Script toolsAndTodos() {
        return (request, p) -> {
            String run = request.runId();
            p.emit(new AgentStreamEvent.StatusUpdate(run + ":status:1", "lifecycle", "planning"));
            p.emit(new AgentStreamEvent.TodosUpdated(run + ":todo", List.of(
                    new TodoItem("1", "search", TodoStatus.IN_PROGRESS, null),
                    new TodoItem("2", "answer", TodoStatus.PENDING, null))));
            p.emit(new AgentStreamEvent.ToolCallStart(run + ":tool:1", "call-1", "web_search", "{\"q\":"));
            p.emit(new AgentStreamEvent.ToolCallArgs("call-1", "\"weather\"}"));
            p.emit(new AgentStreamEvent.ToolCallEnd("call-1"));
            p.emit(new AgentStreamEvent.ToolCallResult(run + ":result:1", "call-1", "sunny, 21°C", false));
            p.emit(new AgentStreamEvent.TodosUpdated(run + ":todo", List.of(
                    new TodoItem("1", "search", TodoStatus.COMPLETED, null),
                    new TodoItem("2", "answer", TodoStatus.IN_PROGRESS, null))));
            p.text("It is sunny.");
            p.finish();
        };
    }

    /** Asks a question and waits for the answer, then answers with what was chosen. */
    public static ScriptedRuntime.Script clarify(String question, List<String> choices) {
        return (request, p) -> {
            String clarifyId = "ask-1";
            p.emit(new AgentStreamEvent.ClarifyRequested(request.runId() + ":clarify:1", clarifyId, question, choices,
                    false, "resume-at-1"));
            ClarifyReply reply = p.awaitAnswer(clarifyId);
            p.text("You chose " + String.join(", ", reply.answer()) + ".");
            p.finish();
        };
    }

    /** Calls the host action {@code name} and answers with its result. */
    public static ScriptedRuntime.Script callsHostAction(String name, String arguments) {
        return (request, p) -> {
            String executionId = "host-1";
            p.emit(new AgentStreamEvent.ToolCallStart(request.runId() + ":tool:host-1", executionId, name, arguments));
            p.emit(new AgentStreamEvent.ToolCallEnd(executionId));
            ToolResult result = p.awaitToolResult(executionId);
            p.text((result.error() ? "The tool failed: " : "The tool said: ") + result.result());
            p.finish();
        };
    }

    /** Streams some text, then waits until cancelled. */
    public static ScriptedRuntime.Script streamsUntilCancelled() {
        return (request, p) -> {
            p.thinking("1", "working");
            p.text("Partial answer");
            p.awaitCancel();
        };
    }

    /** Streams {@code count} text deltas as fast as it can, then succeeds. */
    public static ScriptedRuntime.Script manyDeltas(int count) {
        return (request, p) -> {
            for (int i = 0; i < count; i++) {
                p.text("t" + i + " ");
            }
            p.finish();
        };
    }

    /** Streams {@code count} deltas with {@code pauseMillis} between them, then succeeds. */
    public static ScriptedRuntime.Script slow(int count, long pauseMillis) {
        return (request, p) -> {
            for (int i = 0; i < count; i++) {
                p.text("s" + i + " ");
                p.sleep(pauseMillis);
            }
            p.finish();
        };
    }

    /**
     * Streams {@code count} frames as a Bridge would, {@code pauseMillis} apart, reporting a resume point
     * after each (the frame's number; "0" before the first): frame i is the text delta {@code "w<i> "}, and
     * every third frame also a status update (a frame of two items). Then the whole answer and success.
     * Re-attached after a point, it plays exactly the frames after it, then goes on: what
     * {@link ScriptedRuntime#reattach} asks of a script. The answer is {@link #framedAnswer(int)}.
     */
    public static ScriptedRuntime.Script frames(int count, long pauseMillis) {
        return (request, p) -> {
            String after = p.resumedAfter();
            int from = after == null ? 1 : Integer.parseInt(after) + 1;
            if (after == null) {
                p.resumePoint("0");
            }
            for (int i = from; i <= count; i++) {
                p.text("w" + i + " ");
                if (i % 3 == 0) {
                    p.emit(new AgentStreamEvent.StatusUpdate(request.runId() + ":status:" + i, "info", "step " + i));
                }
                p.resumePoint(Integer.toString(i));
                p.sleep(pauseMillis);
            }
            p.emit(new AgentStreamEvent.TextFinal(request.assistantMessageId(), framedAnswer(count)));
            p.finish();
        };
    }

    /** The whole answer of {@link #frames(int, long)}: {@code "w1 w2 … w<count> "}. */
    public static String framedAnswer(int count) {
        StringBuilder answer = new StringBuilder();
        for (int i = 1; i <= count; i++) {
            answer.append('w').append(i).append(' ');
        }
        return answer.toString();
    }

    /** Streams some text, then reports a failure. */
    public static ScriptedRuntime.Script failsWith(String code, String message) {
        return (request, p) -> {
            p.text("Half an ans");
            p.emit(new AgentStreamEvent.RunFailed(code, message));
        };
    }

    /** Streams some text, then its stream breaks with an exception. */
    public static ScriptedRuntime.Script throwsMidStream(Exception error) {
        return (request, p) -> {
            p.text("Half an ans");
            throw error;
        };
    }

    /** Streams some text, then ends without a terminal event. */
    public static ScriptedRuntime.Script endsWithoutTerminal() {
        return (request, p) -> p.text("Half an ans");
    }

    /** Succeeds at once with a fixed text (for queues and strategies). */
    public static ScriptedRuntime.Script instant(String text) {
        return (request, p) -> {
            p.text(text);
            p.emit(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        };
    }
}
