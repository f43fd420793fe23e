package dev.parley.chat.spring.internal.agui;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.engine.ThreadView;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.UserMessage;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * A thread's active branch as AG-UI sees it: the user messages under the ids their clients gave them (or
 * Parley's id when none was given), and the {@code MESSAGES_SNAPSHOT} of the branch.
 */
final class AgUiHistory {
    private final List<Message> messages;

    private AgUiHistory(List<Message> messages) {
        this.messages = List.copyOf(messages);
    }

    /** Reads the whole active branch of the thread, page by page, oldest first. */
    static AgUiHistory read(ChatEngine engine, String ownerId, String threadId) {
        List<List<Message>> pages = new ArrayList<>();
        String before = null;
        do {
            ThreadView view = engine.getThread(ownerId, threadId, before, EngineLimits.defaults().defaultPageSize());
            pages.add(0, view.messages());
            before = view.olderCursor();
        } while (before != null);
        List<Message> all = new ArrayList<>();
        pages.forEach(all::addAll);
        return new AgUiHistory(all);
    }

    /** The id AG-UI knows a user message by. */
    static String agUiId(UserMessage message) {
        return message.clientMessageId() != null ? message.clientMessageId() : message.id();
    }

    List<UserMessage> userMessages() {
        return messages.stream().filter(UserMessage.class::isInstance).map(UserMessage.class::cast).toList();
    }

    /** The user message AG-UI knows by {@code agUiId}, if the branch has it. */
    Optional<UserMessage> user(String agUiId) {
        return userMessages().stream().filter(m -> agUiId(m).equals(agUiId)).findFirst();
    }

    /** The run of the branch's newest answer, if any. */
    Optional<String> latestRunId() {
        for (int i = messages.size() - 1; i >= 0; i--) {
            if (messages.get(i) instanceof AssistantMessage answer) {
                return Optional.of(answer.runId());
            }
        }
        return Optional.empty();
    }

    /**
     * The branch as AG-UI messages, leaving out what the run {@code streamedRunId} wrote (its events follow
     * the snapshot) but keeping its user message: user messages, answers with their tool calls (of
     * regenerated answers the newest only), and tool results. Thinking, statuses, todos and questions are not messages in AG-UI; the client's own
     * {@code system} and {@code developer} messages ({@code keep}) come first, as the client had them.
     */
    ArrayNode snapshot(@Nullable String streamedRunId, List<AgUiInput.Message> keep) {
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        for (AgUiInput.Message own : keep) {
            out.addObject().put("id", own.id()).put("role", own.role()).put("content", own.text());
        }
        for (Message message : messages) {
            boolean streamed = message.runId().equals(streamedRunId);
            if (message instanceof UserMessage user) {
                out.addObject().put("id", agUiId(user)).put("role", "user").put("content", user.text());
            } else if (message instanceof AssistantMessage answer && !streamed && !replaced(answer)) {
                ObjectNode entry = out.addObject().put("id", answer.id()).put("role", "assistant");
                if (!answer.text().isEmpty()) {
                    entry.put("content", answer.text());
                }
                List<ActionExecutionMessage> calls = steps(answer, ActionExecutionMessage.class);
                if (!calls.isEmpty()) {
                    ArrayNode toolCalls = entry.putArray("toolCalls");
                    for (ActionExecutionMessage call : calls) {
                        ObjectNode function = toolCalls.addObject().put("id", call.executionId()).put("type", "function")
                                .putObject("function");
                        function.put("name", call.name()).put("arguments", call.arguments());
                    }
                }
                for (ResultMessage result : steps(answer, ResultMessage.class)) {
                    ObjectNode tool = out.addObject().put("id", result.id()).put("role", "tool")
                            .put("toolCallId", result.executionId()).put("content", result.result());
                    if (result.error()) {
                        tool.put("error", result.result());
                    }
                }
            }
        }
        return out;
    }

    /** Whether a newer answer to the same user message (a regenerated variant) stands beside this one. */
    private boolean replaced(AssistantMessage answer) {
        int at = messages.indexOf(answer);
        return messages.subList(at + 1, messages.size()).stream().anyMatch(m -> m instanceof AssistantMessage other
                && Objects.equals(other.parentMessageId(), answer.parentMessageId()));
    }

        private <T extends Message> List<T> steps(AssistantMessage answer, Class<T> kind) {
        return messages.stream().filter(kind::isInstance).map(kind::cast)
                .filter(m -> answer.id().equals(m.parentMessageId())).toList();
    }
}
