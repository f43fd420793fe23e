package dev.parley.chat.runtime;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/** A model a person can pick for a thread; never carries credentials. */
public record ModelOption(String id, String name, @Nullable String provider) {
    public ModelOption {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
    }
}
