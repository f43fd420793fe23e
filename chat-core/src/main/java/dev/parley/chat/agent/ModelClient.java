package dev.parley.chat.agent;

import dev.parley.chat.runtime.AttachmentSupport;
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

    /**
     * The attachments this client puts on the wire ({@link ModelMessage.User#attachments()}), by media type:
     * what {@link AgentLoopRuntime} declares, so the engine refuses any other before storing it. Declare only
     * types the client sends in a form the model reads; the default takes none.
     */
    default AttachmentSupport attachmentSupport() {
        return AttachmentSupport.NONE;
    }
}
