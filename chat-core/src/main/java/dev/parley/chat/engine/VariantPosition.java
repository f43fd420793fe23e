package dev.parley.chat.engine;

/**
 * Where an assistant message stands among the answers to the same user message (regenerated variants):
 * {@code index} counts from 0 in the order they were created, {@code count} is how many there are.
 */
public record VariantPosition(int index, int count) {
    public VariantPosition {
        if (index < 0 || count < 1 || index >= count) {
            throw new IllegalArgumentException("bad variant position " + index + "/" + count);
        }
    }
}
