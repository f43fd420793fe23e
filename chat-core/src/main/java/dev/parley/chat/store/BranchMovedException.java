package dev.parley.chat.store;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import org.jspecify.annotations.Nullable;

/**
 * A batch {@linkplain StoreBatch.Builder#expectActiveLeaf expected} a thread's active leaf that moved meanwhile
 * (another host instance added a message): nothing of the batch was stored; the writer reads the thread again.
 * Code {@link ErrorCode#CONFLICT}.
 */
public final class BranchMovedException extends ChatException {
    private static final long serialVersionUID = 1L;

    public BranchMovedException(String threadId, @Nullable String expected, @Nullable String actual) {
        super(ErrorCode.CONFLICT, "thread " + threadId + "'s active branch moved (expected leaf " + expected
                + ", found " + actual + ")");
    }
}
