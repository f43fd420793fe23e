package dev.parley.chat.input;

import java.util.List;
import java.util.Objects;

/**
 * A question back to the person.
 *
 * @param choices the offered answers; empty for free text only
 * @param multiSelect whether several choices may be picked
 */
public record ClarifyRequest(String question, List<String> choices, boolean multiSelect) implements InputRequest {
    public ClarifyRequest {
        Objects.requireNonNull(question, "question");
        choices = choices == null ? List.of() : List.copyOf(choices);
    }

    @Override
    public InputKind kind() {
        return InputKind.CLARIFY;
    }
}
