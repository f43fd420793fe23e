package dev.parley.chat.engine.internal;

import dev.parley.chat.engine.HostAction;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.TokenUsage;
import dev.parley.chat.runtime.RunProgress;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/**
 * When a run of a runtime that keeps nothing across host processes ({@code Capability.RESUME}: the agent loop)
 * can be continued from the store after a restart, and what it is given to go on from. Such a run can go on
 * only while it waits for nothing but the person's approvals of host actions the engine asked for: those are
 * stored, so the next process asks nothing again and runs each approved action once (its claim is stored);
 * the runtime's own state is rebuilt from the stored steps.
 */
final class RunResumption {
    private RunResumption() {
    }

    /**
     * True if every open tool call of the run waits for an approval the engine asked for — one of
     * {@code pending}, which must hold nothing else — and is a host action this engine knows.
     *
     * @param messages the run's messages, as folded from its events
     * @param pending the run's pending inputs
     */
    static boolean waitsOnlyForEngineApprovals(List<Message> messages, List<PendingInput> pending,
            Map<String, HostAction> hostActions) {
        List<ActionExecutionMessage> open = openCalls(messages);
        if (open.isEmpty() || pending.size() != open.size()) {
            return false;
        }
        Set<String> asked = pending.stream().filter(input -> input.resumeToken() == null).map(PendingInput::inputId)
                .collect(Collectors.toSet());
        return open.stream().allMatch(call -> asked.contains(ToolCallFlow.approvalInputId(call.executionId()))
                && hostActions.containsKey(call.name()));
    }

    /** The run's tool calls without a result, in the order they were made. */
    static List<ActionExecutionMessage> openCalls(List<Message> messages) {
        return messages.stream().filter(ActionExecutionMessage.class::isInstance).map(ActionExecutionMessage.class::cast)
                .filter(call -> call.status() == MessageStatus.IN_PROGRESS).toList();
    }

    /** What the runtime continues from: the answer's text so far, the run's tool calls and results, its usage. */
    static RunProgress progress(List<Message> messages, String assistantMessageId, @Nullable TokenUsage usage) {
        String text = "";
        List<Message> steps = new ArrayList<>();
        for (Message message : messages) {
            if (message instanceof ActionExecutionMessage || message instanceof ResultMessage) {
                steps.add(message);
            } else if (message instanceof AssistantMessage answer && answer.id().equals(assistantMessageId)) {
                text = answer.text();
            }
        }
        return new RunProgress(text, steps, usage);
    }
}
