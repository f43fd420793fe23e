package dev.parley.chat.model;

import dev.parley.chat.RunErrorCode;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Why something failed: a machine-readable {@code code} and a human-readable message free of secrets.
 * The code is text on purpose (stored runs and events of older versions, and runtimes' own codes, must
 * read): usually a {@link RunErrorCode} name ({@link #knownCode()}), but any other code may appear — a
 * runtime's own such as {@code SESSION_BUSY}, an adapter's, a later version's.
 *
 * @param retryAfterSeconds how long the model provider asked to wait before trying again (its
 *     {@code Retry-After}, whole seconds), null when it did not say; set on {@code RATE_LIMITED} failures
 *     whose model library reports the header
 */
public record ErrorInfo(String code, String message, @Nullable Long retryAfterSeconds) {
    public ErrorInfo {
        Objects.requireNonNull(code, "code");
        Objects.requireNonNull(message, "message");
        if (retryAfterSeconds != null && retryAfterSeconds < 0) {
            throw new IllegalArgumentException("retryAfterSeconds must not be negative, got " + retryAfterSeconds);
        }
    }

    /** An error without a retry hint. */
    public ErrorInfo(String code, String message) {
        this(code, message, null);
    }

    /** The code as a known {@link RunErrorCode}, or null for a code this version does not know. */
    public @Nullable RunErrorCode knownCode() {
        return RunErrorCode.of(code);
    }
}
