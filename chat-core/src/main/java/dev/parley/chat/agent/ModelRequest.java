package dev.parley.chat.agent;

import dev.parley.chat.runtime.HostToolSpec;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * One model call of a run.
 *
 * @param modelId the model to use, null for the client's default
 * @param systemPrompt the instructions (a skill's text), null for none
 * @param messages the conversation so far, oldest first, ending with the person's message or tool results
 * @param tools the tools the model may call (JSON Schema parameters)
 */
public record ModelRequest(
        @Nullable String modelId,
        @Nullable String systemPrompt,
        List<ModelMessage> messages,
        List<HostToolSpec> tools) {

    public ModelRequest {
        Objects.requireNonNull(messages, "messages");
        messages = List.copyOf(messages);
        tools = tools == null ? List.of() : List.copyOf(tools);
    }
}
