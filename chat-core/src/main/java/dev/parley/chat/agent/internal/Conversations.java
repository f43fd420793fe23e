package dev.parley.chat.agent.internal;

import dev.parley.chat.agent.ModelMessage;
import dev.parley.chat.agent.ToolCall;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.UserMessage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Turns a run's conversation so far (Parley's messages) into the messages a chat-completion API takes: each
 * user message, and for each answer its tool calls (one assistant message), their results, then its text.
 * A call without a stored result gets an error result (the APIs require one per call).
 */
final class Conversations {
    private Conversations() {
    }

    static List<ModelMessage> toModel(List<Message> history) {
        List<ModelMessage> out = new ArrayList<>();
        AssistantMessage answer = null;
        Map<String, ToolCall> calls = new LinkedHashMap<>();
        Map<String, ModelMessage.ToolResult> results = new LinkedHashMap<>();
        for (Message message : history) {
            if (message instanceof ActionExecutionMessage call) {
                calls.put(call.executionId(), new ToolCall(call.executionId(), call.name(), call.arguments()));
            } else if (message instanceof ResultMessage result) {
                results.put(result.executionId(), new ModelMessage.ToolResult(result.executionId(), result.name(),
                        result.result(), result.error()));
            } else {
                flush(out, answer, calls, results);
                answer = null;
                if (message instanceof UserMessage user) {
                    out.add(new ModelMessage.User(user.text()));
                } else if (message instanceof AssistantMessage assistant) {
                    answer = assistant;
                }
            }
        }
        flush(out, answer, calls, results);
        return out;
    }

    private static void flush(List<ModelMessage> out, AssistantMessage answer, Map<String, ToolCall> calls,
            Map<String, ModelMessage.ToolResult> results) {
        if (answer == null) {
            return;
        }
        if (!calls.isEmpty()) {
            out.add(new ModelMessage.Assistant("", List.copyOf(calls.values())));
            for (ToolCall call : calls.values()) {
                out.add(results.getOrDefault(call.id(), new ModelMessage.ToolResult(call.id(), call.name(),
                        "the call has no result", true)));
            }
        }
        if (!answer.text().isBlank() || calls.isEmpty()) {
            out.add(new ModelMessage.Assistant(answer.text(), List.of()));
        }
        calls.clear();
        results.clear();
    }
}
