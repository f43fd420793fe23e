package dev.parley.chat.hermes;

/** Which HTTP API of Hermes the adapter speaks. */
public enum HermesTransport {
    /**
     * A Hermes Bridge speaking the Bridge protocol v1 ({@code docs/hermes-bridge-protocol.md}): every event
     * kind, clarify answers, cancel, host tools and re-attachment after a dropped stream or a host restart.
     */
    BRIDGE,
    /**
     * Hermes Agent's own API server ({@code POST /v1/runs}, {@code GET /v1/runs/{id}/events}), 0.19 and
     * later. The adapter reads what the server supports from it and keeps a thread's memory either way
     * (history sent on 0.19, the server's session on 0.20+); approvals and, where advertised, clarify work.
     * It streams less (no reasoning, no todo list, no tool output or call ids) and cannot replay a stream,
     * so the adapter declares no re-attachment for it; see {@code docs/hermes-bridge-protocol.md}, part 2.
     */
    API_SERVER
}
