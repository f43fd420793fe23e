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
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.UserMessage;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The newest part of a thread's active branch as AG-UI sees it: at most the engine's largest page of user
 * and assistant messages (each with its newest steps, as a thread view shows them; a tool result whose call is
 * older than those is left out with it), the user messages under the ids their clients gave them (or
 * Parley's id when none was given), and the {@code MESSAGES_SNAPSHOT} made of it. One read of the store,
 * bounded by the engine's limits whatever the thread's length.
 */
final class AgUiHistory {
    private final List<Message> messages;
    private final boolean whole;
    private final String downloadPath;

    private AgUiHistory(List<Message> messages, boolean whole, String downloadPath) {
        this.messages = List.copyOf(messages);
        this.whole = whole;
        this.downloadPath = downloadPath;
    }

    /**
     * Reads the newest page of the thread's active branch, {@link EngineLimits#maxPageSize()} messages at most;
     * attachments are named by {@code downloadPath} and their id.
     */
    static AgUiHistory read(ChatEngine engine, String ownerId, String threadId, String downloadPath) {
        ThreadView view = engine.getThread(ownerId, threadId, null, engine.limits().maxPageSize());
        return new AgUiHistory(view.messages(), view.olderCursor() == null, downloadPath);
    }

    /** Whether the page holds the whole branch (else older messages come before it). */
    boolean whole() {
        return whole;
    }

    /** The id AG-UI knows a user message by. */
    static String agUiId(UserMessage message) {
        return message.clientMessageId() != null ? message.clientMessageId() : message.id();
    }

    List<UserMessage> userMessages() {
        return messages.stream().filter(UserMessage.class::isInstance).map(UserMessage.class::cast).toList();
    }

    /** The user message AG-UI knows by {@code agUiId}, if this page of the branch has it. */
    Optional<UserMessage> user(String agUiId) {
        return userMessages().stream().filter(m -> agUiId(m).equals(agUiId)).findFirst();
    }

    /** The run of the branch's newest answer, if any (the page holds the branch's newest messages). */
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
     * regenerated answers the newest only), and tool results. Thinking, statuses, todos and questions are not
     * messages in AG-UI. The client's own {@code system} and {@code developer} messages come first, as the
     * client had them.
     *
     * <p>The snapshot replaces the client's list, but a client keeps the messages it has in their places and
     * adds the others after them: so it starts at the first message of this page the client sent (the page's
     * start if it sent none), leaving out older messages it does not have (a client that restarted and sent
     * only its new message keeps its short list). When the branch is longer than this page, the client's
     * messages from before the page come first, as it sent them, so that the snapshot deletes none of them.
     */
    ArrayNode snapshot(@Nullable String streamedRunId, List<AgUiInput.Message> sent) {
        ArrayNode out = JsonNodeFactory.instance.arrayNode();
        for (AgUiInput.Message own : sent) {
            if (isOwn(own)) {
                out.addObject().put("id", own.id()).put("role", own.role()).put("content", own.text());
            }
        }
        Set<String> sentIds = new HashSet<>();
        sent.forEach(m -> sentIds.add(m.id()));
        int from = 0;
        while (from < messages.size() && !sentIds.contains(agUiId(messages.get(from)))) {
            from++;
        }
        if (from == messages.size()) {
            from = 0;
        } else if (!whole) {
            String first = agUiId(messages.get(from));
            for (int i = 0; i < sent.size() && !sent.get(i).id().equals(first); i++) {
                if (!isOwn(sent.get(i))) {
                    out.add(sent.get(i).sent());
                }
            }
        }
        for (Message message : messages.subList(from, messages.size())) {
            boolean streamed = message.runId().equals(streamedRunId);
            if (message instanceof UserMessage user) {
                out.addObject().put("id", agUiId(user)).put("role", "user")
                        .set("content", AgUiParts.content(user, downloadPath));
            } else if (message instanceof AssistantMessage answer && !streamed && !replaced(answer)) {
                ObjectNode entry = out.addObject().put("id", answer.id()).put("role", "assistant");
                if (!answer.text().isEmpty()) {
                    entry.put("content", answer.text());
                }
                List<ActionExecutionMessage> calls = steps(answer, ActionExecutionMessage.class);
                Set<String> called = new HashSet<>();
                calls.forEach(call -> called.add(call.executionId()));
                if (!calls.isEmpty()) {
                    ArrayNode toolCalls = entry.putArray("toolCalls");
                    for (ActionExecutionMessage call : calls) {
                        ObjectNode function = toolCalls.addObject()
                                .put("id", AgUiToolCallIds.of(call.runId(), call.executionId())).put("type", "function")
                                .putObject("function");
                        function.put("name", call.name()).put("arguments", call.arguments());
                    }
                }
                Set<String> unanswered = new java.util.LinkedHashSet<>(called);
                for (ResultMessage result : steps(answer, ResultMessage.class)) {
                    if (!called.contains(result.executionId())) {
                        continue;
                    }
                    unanswered.remove(result.executionId());
                    ObjectNode tool = out.addObject().put("id", result.id()).put("role", "tool")
                            .put("toolCallId", AgUiToolCallIds.of(result.runId(), result.executionId()))
                            .put("content", result.result());
                    if (result.error()) {
                        tool.put("error", result.result());
                    }
                }
                RunStatus ended = endOf(answer.status());
                if (ended != null) {
                    for (ActionExecutionMessage call : calls) {
                        if (unanswered.contains(call.executionId())) {
                            String toolCallId = AgUiToolCallIds.of(call.runId(), call.executionId());
                            out.addObject().put("id", AgUiFrames.unfinishedResultId(toolCallId)).put("role", "tool")
                                    .put("toolCallId", toolCallId)
                                    .put("content", AgUiFrames.unfinishedToolContent(ended));
                        }
                    }
                }
            }
        }
        return out;
    }

    /** How the run of an answer in {@code status} ended, if it ended other than completed; else null. */
    private static @Nullable RunStatus endOf(MessageStatus status) {
        return switch (status) {
            case CANCELLED -> RunStatus.CANCELLED;
            case FAILED -> RunStatus.FAILED;
            case INTERRUPTED -> RunStatus.INTERRUPTED;
            default -> null;
        };
    }

    /** The id AG-UI knows a user or assistant message by (a step's own id otherwise). */
    private static String agUiId(Message message) {
        return message instanceof UserMessage user ? agUiId(user) : message.id();
    }

    private static boolean isOwn(AgUiInput.Message message) {
        return message.role().equals("system") || message.role().equals("developer");
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
