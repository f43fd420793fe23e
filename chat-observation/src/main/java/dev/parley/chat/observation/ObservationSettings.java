package dev.parley.chat.observation;

import java.util.Objects;
import java.util.Set;

/**
 * What Parley's observations record.
 *
 * @param runtime the runtime's name, recorded as {@code parley.runtime} on every run (e.g. {@code hermes},
 *     {@code agent-loop})
 * @param includeContent whether text people and models wrote goes on the observations: the run's input
 *     ({@code parley.run.input}) and tool arguments and results ({@code gen_ai.tool.call.arguments},
 *     {@code gen_ai.tool.call.result}). Off by default: traces usually leave the service, and that text is
 *     personal
 * @param hostActions the names of the host's actions, so that their tool calls are recorded as
 *     {@code parley.tool.kind=host} (a call the person's browser runs is {@code client}, any other
 *     {@code runtime})
 */
public record ObservationSettings(String runtime, boolean includeContent, Set<String> hostActions) {
    public ObservationSettings {
        Objects.requireNonNull(runtime, "runtime");
        hostActions = hostActions == null ? Set.of() : Set.copyOf(hostActions);
    }

    /** Content off, no host actions known. */
    public static ObservationSettings of(String runtime) {
        return new ObservationSettings(runtime, false, Set.of());
    }

    /** These settings with content on or off. */
    public ObservationSettings withIncludeContent(boolean value) {
        return new ObservationSettings(runtime, value, hostActions);
    }

    /** These settings with these host action names. */
    public ObservationSettings withHostActions(Set<String> names) {
        return new ObservationSettings(runtime, includeContent, names);
    }
}
