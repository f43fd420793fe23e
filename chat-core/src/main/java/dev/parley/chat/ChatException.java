package dev.parley.chat;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The one exception hierarchy of Parley's public API: every failure Parley reports — a bad request, a
 * missing thread, a failed store, a refused model call ({@code ModelFailure}), a builder given a bad value
 * ({@link ErrorCode#CONFIGURATION}) — is a {@code ChatException} or a subclass. Its {@link #code()} says
 * what kind of failure it is; its message is meant for developers and never contains secrets (API keys,
 * bearer tokens). As in the JDK, a null passed where a value is required throws
 * {@link NullPointerException}, and a value record (an event, a message) built with values its contract
 * forbids throws {@link IllegalArgumentException}: both are programming errors, not failures to handle.
 *
 * <p>Instances are immutable and safe to share between threads.
 */
public class ChatException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final ErrorCode code;

    public ChatException(ErrorCode code, String message) {
        this(code, message, null);
    }

    public ChatException(ErrorCode code, String message, @Nullable Throwable cause) {
        super(Objects.requireNonNull(message, "message"), cause);
        this.code = Objects.requireNonNull(code, "code");
    }

    /** The failure's kind; never null. */
    public ErrorCode code() {
        return code;
    }

    public static ChatException notFound(String what, String id) {
        return new ChatException(ErrorCode.NOT_FOUND, what + " not found: " + id);
    }

    public static ChatException invalidInput(String message) {
        return new ChatException(ErrorCode.INVALID_INPUT, message);
    }

    public static ChatException conflict(String message) {
        return new ChatException(ErrorCode.CONFLICT, message);
    }

    public static ChatException unsupported(String message) {
        return new ChatException(ErrorCode.UNSUPPORTED, message);
    }

    /** A builder or setting was given a value Parley cannot work with ({@link ErrorCode#CONFIGURATION}). */
    public static ChatException configuration(String message) {
        return new ChatException(ErrorCode.CONFIGURATION, message);
    }
}
