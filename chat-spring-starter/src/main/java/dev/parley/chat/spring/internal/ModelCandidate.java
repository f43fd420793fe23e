package dev.parley.chat.spring.internal;

import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.spring.ParleyAgentProperties.ModelLibrary;
import java.util.Objects;

/**
 * A model bean of the application that the agent loop could run on, found by the starter: its library, what the
 * bean is (for start-up messages) and the client over it.
 *
 * @param library the library the bean belongs to, never AUTO
 * @param bean the bean's name and type, e.g. {@code "openAiChatModel (OpenAiChatModel)"}
 * @param client the agent loop's client over the bean
 */
public record ModelCandidate(ModelLibrary library, String bean, ModelClient client) {
    public ModelCandidate {
        Objects.requireNonNull(library, "library");
        Objects.requireNonNull(bean, "bean");
        Objects.requireNonNull(client, "client");
        if (library == ModelLibrary.AUTO) {
            throw new IllegalArgumentException("a candidate belongs to one library, not AUTO");
        }
    }
}
