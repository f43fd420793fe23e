package dev.parley.chat.runtime;

import dev.parley.chat.model.Message;
import java.util.List;

/**
 * The conversation before a run's message, for runtimes that do not keep their own session (a model API,
 * Hermes' API server before 0.20) or whose session does not cover it (the run answers an edit or another
 * branch: {@link RunRequest#runtimeSessionId()} is then null).
 *
 * <p>Read from the store on the first call of {@link #messages()} only, so a runtime that keeps its own
 * session pays nothing. Thread-safe.
 */
public interface ConversationHistory {

    /**
     * The active branch's earlier turns, oldest first, up to (not including) the run's message: user and
     * assistant messages, each assistant message followed by its tool calls and their results (a runtime that
     * does not replay tools skips them). Bounded by the engine's history limits, newest kept.
     *
     * @throws dev.parley.chat.ChatException STORE_FAILURE if the store cannot be read
     */
    List<Message> messages();

    /** No earlier turns (a thread's first run). */
    static ConversationHistory empty() {
        return List::of;
    }

    /** These turns. */
    static ConversationHistory of(List<Message> messages) {
        List<Message> copy = List.copyOf(messages);
        return () -> copy;
    }
}
