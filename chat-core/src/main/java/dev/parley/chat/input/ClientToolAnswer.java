package dev.parley.chat.input;

import java.util.Objects;

/**
 * What a client tool produced.
 *
 * @param result the tool's result (text, typically JSON), or its error message when {@code error}
 */
public record ClientToolAnswer(String result, boolean error) implements InputAnswer {
    public ClientToolAnswer {
        Objects.requireNonNull(result, "result");
    }

    @Override
    public InputKind kind() {
        return InputKind.CLIENT_TOOL;
    }
}
