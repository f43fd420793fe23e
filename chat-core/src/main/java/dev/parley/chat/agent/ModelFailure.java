package dev.parley.chat.agent;

import org.jspecify.annotations.Nullable;

/**
 * A model call failed in a way the person can act on; {@link #kind()} names it, and the run fails with the
 * matching code ({@link Kind#code()}). Messages never contain secrets.
 */
public final class ModelFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /** How a model call failed. */
    public enum Kind {
        /** Too many requests (HTTP 429); worth retrying later. */
        RATE_LIMITED("RATE_LIMITED"),
        /** The API key or credentials were refused (HTTP 401, 403). */
        AUTHENTICATION("AUTHENTICATION_FAILED"),
        /** The conversation is longer than the model's context window. */
        CONTEXT_TOO_LONG("CONTEXT_TOO_LONG"),
        /** The model's server could not be reached or did not answer (connection refused, timeout, 5xx). */
        UNREACHABLE("RUNTIME_UNAVAILABLE"),
        /** The request was refused as malformed (HTTP 400 for another reason). */
        INVALID_REQUEST("INVALID_INPUT"),
        /** Anything else. */
        FAILED("RUNTIME_FAILED");

        private final String code;

        Kind(String code) {
            this.code = code;
        }

        /** The code a run fails with ({@code RunFailed.code}). */
        public String code() {
            return code;
        }
    }

    private final Kind kind;

    public ModelFailure(Kind kind, String message, @Nullable Throwable cause) {
        super(message, cause);
        this.kind = kind;
    }

    public ModelFailure(Kind kind, String message) {
        this(kind, message, null);
    }

    public Kind kind() {
        return kind;
    }
}
