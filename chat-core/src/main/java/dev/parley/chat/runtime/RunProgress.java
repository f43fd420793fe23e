package dev.parley.chat.runtime;

import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.TokenUsage;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What a run did before the host process that followed it stopped, as stored: the answer's text so far and
 * the run's tool calls and their results, in the order they happened. Given to a runtime that continues runs
 * from the store ({@link RuntimeAdapter#resume}).
 *
 * @param text the answer's text so far (empty if none)
 * @param steps the run's {@link ActionExecutionMessage}s and {@link ResultMessage}s, oldest first
 * @param usage the token usage the run reported so far (its running total), or null if none: a runtime that
 *     reports running totals goes on counting from it
 */
public record RunProgress(String text, List<Message> steps, @Nullable TokenUsage usage) {

    /** @throws IllegalArgumentException if a step is neither a tool call nor a tool result */
    public RunProgress {
        Objects.requireNonNull(text, "text");
        steps = List.copyOf(steps);
        for (Message step : steps) {
            if (!(step instanceof ActionExecutionMessage || step instanceof ResultMessage)) {
                throw new IllegalArgumentException("a step is a tool call or a tool result, not " + step);
            }
        }
    }

    /** The calls without a result yet, oldest first: the run waits for them and does not make them again. */
    public List<ActionExecutionMessage> openCalls() {
        Set<String> answered = new HashSet<>();
        for (Message step : steps) {
            if (step instanceof ResultMessage result) {
                answered.add(result.executionId());
            }
        }
        return steps.stream().filter(ActionExecutionMessage.class::isInstance).map(ActionExecutionMessage.class::cast)
                .filter(call -> !answered.contains(call.executionId())).toList();
    }
}
