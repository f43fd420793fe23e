package dev.parley.chat.engine;

import java.util.List;
import java.util.Objects;

/**
 * Where a user message stands among the user messages sharing its parent (the message and its edits), for a
 * "‹ 2 / 3 ›" switcher: {@code index} counts from 0 in the order they were sent, {@code count} is how many
 * there are, and {@code siblingIds} names them in that order (the message itself at {@code index}), so that a
 * page can make another one the active branch ({@link ChatEngine#switchBranch}).
 */
public record BranchPosition(int index, int count, List<String> siblingIds) {
    public BranchPosition {
        siblingIds = List.copyOf(Objects.requireNonNull(siblingIds, "siblingIds"));
        if (index < 0 || count < 1 || index >= count || siblingIds.size() != count) {
            throw new IllegalArgumentException("bad branch position " + index + "/" + count + " " + siblingIds);
        }
    }
}
