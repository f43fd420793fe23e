package dev.parley.chat.engine;

import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Message;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A page of a conversation's active branch, oldest first: the newest user and assistant messages of the
 * branch before a cursor, every answer to a user message side by side (regenerated variants), each assistant
 * message followed by its steps (thinking, tools, todos, inputs, statuses, errors): its newest
 * {@link EngineLimits#maxStepsPerAnswer()} of them, so that a run of thousands of tool calls makes a page of
 * the usual size.
 *
 * @param variants for every assistant message in the page, its place among the answers to the same user
 *     message
 * @param branches for every user message in the page, its place among the user messages sharing its parent
 *     (the message and its edits: a "‹ 2 / 3 ›" switcher when there are several)
 * @param olderCursor pass it as {@code before} to get the previous page; null when there is none
 * @param omittedSteps for every assistant message in the page with more steps than the page shows, how many of
 *     its oldest steps are left out (an export has them all); answers shown with every step are not in it
 */
public record ThreadView(
        ChatThread thread,
        List<Message> messages,
        Map<String, VariantPosition> variants,
        Map<String, BranchPosition> branches,
        @Nullable String olderCursor,
        Map<String, Integer> omittedSteps) {

    public ThreadView {
        Objects.requireNonNull(thread, "thread");
        messages = List.copyOf(messages);
        variants = Map.copyOf(variants);
        branches = Map.copyOf(branches);
        omittedSteps = Map.copyOf(omittedSteps);
    }
}
