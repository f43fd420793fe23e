package dev.parley.chat;

import org.jspecify.annotations.Nullable;

/**
 * The codes a failed (or interrupted) run carries in {@code RunFailed.code()} and {@code ErrorInfo.code()},
 * as far as Parley itself produces them. The code travels as text — in stored events, stored runs, the SSE
 * stream and AG-UI's {@code RUN_ERROR} — so a run's error may hold a code this enum does not list: a
 * runtime's own code passed through (the Hermes Bridge's {@code SESSION_BUSY}), an adapter's
 * ({@code HermesErrors}), or one a later version adds. {@link #of(String)} reads a code and gives null for
 * those; callers that switch over codes keep a default branch.
 *
 * <p>Every {@link ErrorCode} is a run code of the same name: a run that fails on a {@link ChatException}
 * carries its code ({@link #of(ErrorCode)}).
 */
public enum RunErrorCode {
    /** See {@link ErrorCode#NOT_FOUND}. */
    NOT_FOUND,
    /** See {@link ErrorCode#CONFLICT}. */
    CONFLICT,
    /** The runtime or the model refused the request as malformed (an HTTP 400 that is not about the context window). */
    INVALID_INPUT,
    /** See {@link ErrorCode#TOO_LARGE}; also a model or runtime refusing a request as too large (HTTP 413). */
    TOO_LARGE,
    /** See {@link ErrorCode#UNSUPPORTED}. */
    UNSUPPORTED,
    /** The runtime or the model's server could not be reached or did not answer (connection refused, timeout, 5xx, a stream that broke off). */
    RUNTIME_UNAVAILABLE,
    /** The runtime or the model failed the work; the default for a failure nobody classified. */
    RUNTIME_FAILED,
    /** The model provider is limiting requests; the error's {@code retryAfterSeconds} says when to try again, if the provider said. */
    RATE_LIMITED,
    /** The model provider refused the API key or credentials. */
    AUTHENTICATION_FAILED,
    /** The conversation is longer than the model's context window. */
    CONTEXT_TOO_LONG,
    /** See {@link ErrorCode#SLOW_CONSUMER}. */
    SLOW_CONSUMER,
    /** The store failed while the run was being written; the run was ended. */
    STORE_FAILURE,
    /** See {@link ErrorCode#CONFIGURATION}. */
    CONFIGURATION,
    /** A bug or an unexpected state inside Parley or an adapter. */
    INTERNAL,
    /**
     * The run's host went away while it was active (a restart, a lost lease); the run is INTERRUPTED, not
     * FAILED, and its error says why.
     */
    INTERRUPTED;

    /** The known code with this text, or null for a code this version does not know. */
    public static @Nullable RunErrorCode of(@Nullable String code) {
        if (code == null) {
            return null;
        }
        for (RunErrorCode known : values()) {
            if (known.name().equals(code)) {
                return known;
            }
        }
        return null;
    }

    /** The run code of the same name as {@code code}. */
    public static RunErrorCode of(ErrorCode code) {
        return valueOf(code.name());
    }
}
