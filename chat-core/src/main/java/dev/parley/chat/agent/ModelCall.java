package dev.parley.chat.agent;

/** A model call in flight. */
@FunctionalInterface
public interface ModelCall {
    /**
     * Stops the call (closes its connection). The listener may still get {@link ModelListener#onError} or
     * nothing more. Idempotent; safe from any thread.
     */
    void cancel();
}
