package dev.parley.chat.runtime;

import java.util.Objects;

/** A skill a person can pick for a thread: its id (e.g. the skill's folder name), a name and a description. */
public record SkillOption(String id, String name, String description) {
    public SkillOption {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(description, "description");
    }
}
