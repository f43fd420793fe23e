package dev.parley.chat.runtime;

import java.util.Objects;

/** The result of a health check; {@code detail} is a short human-readable explanation, free of secrets. */
public record RuntimeHealth(boolean healthy, String detail) {
    public RuntimeHealth {
        Objects.requireNonNull(detail, "detail");
    }

    public static RuntimeHealth up(String detail) {
        return new RuntimeHealth(true, detail);
    }

    public static RuntimeHealth down(String detail) {
        return new RuntimeHealth(false, detail);
    }
}
