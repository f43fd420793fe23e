package dev.parley.chat;

/**
 * What went wrong, in terms a caller (and the HTTP layer) can act on. Every {@link ChatException}
 * carries one. New codes may be added in later versions; callers that switch over codes should keep a
 * default branch. A failed run carries its code as text; see {@link RunErrorCode} for the codes it may hold.
 */
public enum ErrorCode {
    /** The thread, run, message or clarify does not exist, or belongs to another owner. */
    NOT_FOUND,
    /** The request clashes with the current state: a busy thread, a clarify answered differently, … */
    CONFLICT,
    /** The request itself is malformed: a blank or oversized message, a negative page, bad JSON, … */
    INVALID_INPUT,
    /**
     * The request is larger than a limit allows: an attachment past its size limit, or past what its message
     * or its owner may hold. Nothing of it was kept.
     */
    TOO_LARGE,
    /** The runtime does not offer what was asked (see {@code RuntimeAdapter.capabilities()}). */
    UNSUPPORTED,
    /** The runtime could not be reached or refused the connection. */
    RUNTIME_UNAVAILABLE,
    /** The runtime was reached but failed the work. */
    RUNTIME_FAILED,
    /** The model provider is limiting requests (HTTP 429); worth trying again later. */
    RATE_LIMITED,
    /** The model provider refused the API key or credentials (HTTP 401, 403). */
    AUTHENTICATION_FAILED,
    /** The conversation is longer than the model's context window. */
    CONTEXT_TOO_LONG,
    /** A live subscriber fell too far behind and was cut off; it reconnects from its cursor. */
    SLOW_CONSUMER,
    /** The store failed to read or write. */
    STORE_FAILURE,
    /**
     * A builder, a setting or a property was given a value Parley cannot work with (a timeout that is not
     * positive, a missing URL, a duplicate name). Thrown while configuring, never while serving a request.
     */
    CONFIGURATION,
    /** A bug or an unexpected state inside Parley. */
    INTERNAL
}
