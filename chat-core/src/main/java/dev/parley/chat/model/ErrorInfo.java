package dev.parley.chat.model;

import java.util.Objects;

/**
 * Why something failed: a machine-readable {@code code} (an {@link dev.parley.chat.ErrorCode} name or a
 * runtime's own code such as {@code SESSION_BUSY}) and a human-readable message free of secrets.
 */
public record ErrorInfo(String code, String message) {
    public ErrorInfo {
        Objects.requireNonNull(code, "code");
        Objects.requireNonNull(message, "message");
    }
}
