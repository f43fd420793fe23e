package dev.parley.chat.input;

import java.util.List;

/** One entry for free text or a single choice, one per chosen option for a multi-select question. */
public record ClarifyAnswer(List<String> answer) implements InputAnswer {
    public ClarifyAnswer {
        answer = answer == null ? List.of() : List.copyOf(answer);
    }

    @Override
    public InputKind kind() {
        return InputKind.CLARIFY;
    }
}
