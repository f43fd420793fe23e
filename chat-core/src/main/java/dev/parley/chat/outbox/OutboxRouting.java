package dev.parley.chat.outbox;

import java.util.List;

/**
 * Which destinations (webhook endpoints, say) want which events. Given to
 * {@link dev.parley.chat.engine.ChatEngine.Builder#outbox}, it is asked on the batch writer's thread for every
 * run end and input request, so it must be fast and must not block: answer from memory.
 * Implementations are immutable and thread-safe.
 */
@FunctionalInterface
public interface OutboxRouting {
    /**
     * The names of the destinations that want {@code type}, each once; empty for none (then nothing is written).
     * A name is at most 200 characters.
     */
    List<String> destinations(OutboxEventType type);
}
