package dev.parley.chat.agent.internal;

import dev.parley.chat.agent.ModelMessage;
import dev.parley.chat.agent.ToolCall;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.RunProgress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Turns a run's conversation so far (Parley's messages) into the messages a chat-completion API takes: each
 * user message, and for each answer its tool calls (one assistant message), their results, then its text.
 * A call without a stored result gets an error result (the APIs require one per call). A user message's
 * attachments go with it, read through {@link AttachedFiles}.
 */
final class Conversations {
    private Conversations() {
    }

    static List<ModelMessage> toModel(List<Message> history, AttachedFiles files) {
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
                    out.add(files.user(user.text(), user.attachments()));
                } else if (message instanceof AssistantMessage assistant) {
                    answer = assistant;
                }
            }
        }
        flush(out, answer, calls, results);
        return out;
    }

    /**
     * A run continued from the store, as the model saw it: the exchanges of its finished model calls, and the
     * calls of the last one if some of them have no result yet.
     *
     * @param messages the finished model calls' assistant messages and tool results
     * @param lastCalls the last model call's tool calls, when some have no result (else empty)
     * @param lastResults the results the last call's tools already have, by execution id
     * @param lastText the text to show the model with {@code lastCalls} (the answer's text when no earlier
     *     message carries it)
     * @param executionIds every execution id the run used
     * @param modelCalls how many model calls the run made
     */
    record Resumed(List<ModelMessage> messages, List<ToolCall> lastCalls, Map<String, ModelMessage.ToolResult> lastResults,
            String lastText, Set<String> executionIds, int modelCalls) {
    }

    /**
     * Rebuilds a run's exchange with the model from its stored steps: consecutive calls came from one model
     * call, and their results follow them. The model's own call ids are not stored; each call is shown under
     * its execution id. The answer's text so far goes with the first model call (where in the exchange it was
     * written is not stored).
     */
    static Resumed resumed(RunProgress progress) {
        List<List<ToolCall>> groups = new ArrayList<>();
        Map<String, ModelMessage.ToolResult> results = new LinkedHashMap<>();
        Set<String> executionIds = new LinkedHashSet<>();
        boolean afterCall = false;
        for (Message step : progress.steps()) {
            if (step instanceof ActionExecutionMessage call) {
                if (!afterCall) {
                    groups.add(new ArrayList<>());
                }
                groups.get(groups.size() - 1).add(new ToolCall(call.executionId(), call.name(), call.arguments()));
                executionIds.add(call.executionId());
                afterCall = true;
            } else if (step instanceof ResultMessage result) {
                results.put(result.executionId(), new ModelMessage.ToolResult(result.executionId(), result.name(),
                        result.result(), result.error()));
                afterCall = false;
            }
        }
        List<ModelMessage> messages = new ArrayList<>();
        String text = progress.text();
        List<ToolCall> lastCalls = List.of();
        Map<String, ModelMessage.ToolResult> lastResults = Map.of();
        for (int i = 0; i < groups.size(); i++) {
            List<ToolCall> calls = groups.get(i);
            boolean finished = calls.stream().allMatch(call -> results.containsKey(call.id()));
            if (!finished && i == groups.size() - 1) {
                lastCalls = List.copyOf(calls);
                Map<String, ModelMessage.ToolResult> known = new LinkedHashMap<>();
                calls.stream().filter(call -> results.containsKey(call.id()))
                        .forEach(call -> known.put(call.id(), results.get(call.id())));
                lastResults = known;
                break;
            }
            messages.add(new ModelMessage.Assistant(text, List.copyOf(calls)));
            text = "";
            for (ToolCall call : calls) {
                messages.add(results.getOrDefault(call.id(), new ModelMessage.ToolResult(call.id(), call.name(),
                        "the call has no result", true)));
            }
        }
        return new Resumed(messages, lastCalls, lastResults, text, executionIds, groups.size());
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
