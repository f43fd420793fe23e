package dev.parley.chat.store;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.util.Set;

/**
 * A fenced {@link StoreBatch} touched runs whose lease another host instance holds now: the batch's writer
 * lost them (its lease lapsed and the run was taken over), so nothing of the batch was stored. Code
 * {@link ErrorCode#CONFLICT}.
 */
public final class LeaseLostException extends ChatException {
    private static final long serialVersionUID = 1L;

    private final Set<String> runIds;

    public LeaseLostException(Set<String> runIds) {
        super(ErrorCode.CONFLICT, "another host instance holds the lease of run(s) " + runIds);
        this.runIds = Set.copyOf(runIds);
    }

    /** The runs of the batch that another instance holds. */
    public Set<String> runIds() {
        return runIds;
    }
}
