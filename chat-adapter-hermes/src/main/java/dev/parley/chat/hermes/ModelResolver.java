package dev.parley.chat.hermes;

import dev.parley.chat.ChatException;
import dev.parley.chat.runtime.ModelOption;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Turns a thread's model id into what Hermes needs (name, provider, base URL, API key), and lists the
 * models a person may choose from. Implementations must be thread-safe; they may read a database or a
 * vault, and are called once per run.
 */
public interface ModelResolver {

    /** The model with this id, or empty if there is none (the run then fails with INVALID_INPUT). */
    Optional<HermesModel> resolve(String modelId);

    /** The models a person may choose from, in display order; never with credentials. */
    List<ModelOption> models();

    /**
     * A fixed list of models.
     *
     * @throws ChatException CONFIGURATION if two models share an id
     */
    static ModelResolver of(Collection<HermesModel> models) {
        Map<String, HermesModel> byId = new LinkedHashMap<>();
        for (HermesModel model : models) {
            if (byId.putIfAbsent(model.id(), model) != null) {
                throw ChatException.configuration("duplicate model id: " + model.id());
            }
        }
        Map<String, HermesModel> fixed = Map.copyOf(byId);
        List<ModelOption> options = byId.values().stream().map(HermesModel::toOption).toList();
        return new ModelResolver() {
            @Override
            public Optional<HermesModel> resolve(String modelId) {
                return Optional.ofNullable(fixed.get(modelId));
            }

            @Override
            public List<ModelOption> models() {
                return options;
            }

            @Override
            public String toString() {
                return "ModelResolver" + options;
            }
        };
    }

    /**
     * Passes any model id to Hermes as the model name, with Hermes' own provider settings; lists no
     * models. The default.
     */
    static ModelResolver passThrough() {
        return new ModelResolver() {
            @Override
            public Optional<HermesModel> resolve(String modelId) {
                return modelId.isBlank() ? Optional.empty() : Optional.of(HermesModel.named(modelId));
            }

            @Override
            public List<ModelOption> models() {
                return List.of();
            }

            @Override
            public String toString() {
                return "ModelResolver.passThrough";
            }
        };
    }
}
