package dev.parley.chat.agent;

import org.jspecify.annotations.Nullable;

/**
 * Receives one streamed model call as it happens. Signals come one at a time (never concurrently), on
 * whatever thread the client uses, and end with exactly one of {@link #onComplete} and {@link #onError}.
 */
public interface ModelListener {
    /** A piece of the answer's text. */
    void onText(String delta);

    /** A piece of the model's reasoning, where the provider returns it. */
    void onThinking(String delta);

    /**
     * A piece of a tool call as it streams: the call's position in the response, its id and name once
     * known (null before), and the next piece of its JSON arguments (may be empty). Clients that only see
     * complete calls may never call this: {@link ModelResponse#toolCalls()} then carries them.
     */
    void onToolCallDelta(int index, @Nullable String id, @Nullable String name, String argumentsDelta);

    /** The call finished. */
    void onComplete(ModelResponse response);

    /** The call failed; a {@link ModelFailure} says how when the client can tell. */
    void onError(Throwable error);
}
