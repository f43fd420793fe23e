package dev.parley.chat.engine;

import java.util.List;
import java.util.Objects;

/**
 * One write of the engine to its store (a new run with its first messages, or a flush of the batch writer),
 * as {@link EngineListener#storeWriteStarted} sees it.
 *
 * @param runIds the runs it writes, in first-seen order
 * @param events how many run events it stores
 * @param messages how many messages it stores
 */
public record StoreWrite(List<String> runIds, int events, int messages) {
    public StoreWrite {
        runIds = List.copyOf(Objects.requireNonNull(runIds, "runIds"));
    }
}
