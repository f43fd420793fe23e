package dev.parley.chat.hermes;

import dev.parley.chat.ChatException;
import dev.parley.chat.runtime.ModelOption;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A model a thread may use, and how Hermes reaches it. {@code apiKey} is a secret: it is sent to the
 * Bridge in the run request only, and never shown by {@link #toString()}. A blank id or name throws
 * {@link ChatException} with {@code CONFIGURATION}.
 *
 * @param id the id persons and threads use (what {@link dev.parley.chat.runtime.RunRequest#modelId()} holds)
 * @param name the model name Hermes is given (e.g. {@code anthropic/claude-sonnet-4})
 * @param provider Hermes' provider slug, null for Hermes' default
 * @param baseUrl an OpenAI-compatible endpoint, null for the provider's default
 * @param apiKey the provider's API key, null to let Hermes use its own configuration
 */
public record HermesModel(String id, String name, @Nullable String provider, @Nullable String baseUrl,
        @Nullable String apiKey) {

    public HermesModel {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
        if (id.isBlank() || name.isBlank()) {
            throw ChatException.configuration("a model's id and name must not be blank");
        }
    }

    /** A model known by its name only: id and name are the same, Hermes' defaults for the rest. */
    public static HermesModel named(String name) {
        return new HermesModel(name, name, null, null, null);
    }

    /** What a person may see of this model: no URL, no key. */
    public ModelOption toOption() {
        return new ModelOption(id, name, provider);
    }

    @Override
    public String toString() {
        return "HermesModel[id=" + id + ", name=" + name + ", provider=" + provider + ", baseUrl=" + baseUrl
                + ", apiKey=" + (apiKey == null ? "null" : "****") + "]";
    }
}
