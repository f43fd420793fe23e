package dev.parley.chat.hermes;

/**
 * Whether the adapter uses a behaviour of Hermes' API server: as the server says ({@link #DETECT}, the
 * default: from {@code GET /v1/capabilities} and, where that is silent, the version on {@code GET /health}),
 * or pinned on or off by the host for a server that says nothing or says it wrongly.
 */
public enum FeatureSetting {
    /** Decide from what the server says about itself. */
    DETECT,
    /** Use it, whatever the server says. */
    ON,
    /** Do not use it, whatever the server says. */
    OFF
}
