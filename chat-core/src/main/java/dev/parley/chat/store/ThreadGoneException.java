package dev.parley.chat.store;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * A {@link StoreBatch} (or a single write of a run) held rows of a thread that no longer exists, or of a run
 * that does not exist: the thread was deleted (or its owner erased) while a run of it was still writing.
 * Nothing of the batch was stored; a deleted thread's data never comes back. Code {@link ErrorCode#NOT_FOUND}.
 *
 * <p>The writer should drop what it holds for these runs: writing it again fails the same way.
 */
public final class ThreadGoneException extends ChatException {
    private static final long serialVersionUID = 1L;

    private final Set<String> runIds;

    public ThreadGoneException(Set<String> runIds) {
        this(runIds, null);
    }

    /** With the failure that showed the thread or run missing (a store's foreign key violation, say). */
    public ThreadGoneException(Set<String> runIds, @Nullable Throwable cause) {
        super(ErrorCode.NOT_FOUND, "the thread (or the run) of run(s) " + new TreeSet<>(runIds) + " no longer exists",
                cause);
        this.runIds = Set.copyOf(runIds);
    }

    /** The runs of the batch whose thread or run row does not exist; never empty when thrown by a store. */
    public Set<String> runIds() {
        return runIds;
    }
}
