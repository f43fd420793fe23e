package dev.parley.chat.agent;

import dev.parley.chat.runtime.ModelOption;
import java.util.List;

/**
 * Streams completions from a model: the one thing {@link AgentLoopRuntime} needs of a model library.
 * Implementations adapt LangChain4j's {@code StreamingChatModel}, Spring AI's {@code ChatModel}, or any API
 * that streams; they must not run tools themselves (every tool call goes back through the loop).
 * Thread-safe: many runs call at once.
 */
public interface ModelClient {
    /**
     * Starts one streamed call. Must not block for the response: signals go to {@code listener} as they come.
     * Failures to start may be thrown, or reported to the listener.
     */
    ModelCall stream(ModelRequest request, ModelListener listener);

    /** The models a person may choose from; empty for the client's one model. */
    default List<ModelOption> models() {
        return List.of();
    }
}
