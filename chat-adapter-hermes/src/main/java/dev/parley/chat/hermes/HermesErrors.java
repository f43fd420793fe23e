package dev.parley.chat.hermes;

/**
 * The codes this adapter puts in {@link dev.parley.chat.event.AgentStreamEvent.RunFailed} besides the
 * {@link dev.parley.chat.ErrorCode} names ({@code RUNTIME_UNAVAILABLE}, {@code RUNTIME_FAILED}) and the
 * codes the Bridge itself sends (e.g. {@code SESSION_BUSY}, {@code INVALID_REQUEST}, {@code UNAUTHORIZED}).
 */
public final class HermesErrors {
    /** The runtime sent something the protocol does not allow: a frame that is not JSON, a wrong content type. */
    public static final String PROTOCOL_ERROR = "PROTOCOL_ERROR";
    /**
     * The event stream broke (connection reset, or closed without its final frame) and re-attaching
     * failed as often as configured.
     */
    public static final String STREAM_LOST = "STREAM_LOST";
    /** Neither an event nor a heartbeat arrived within the idle timeout, and re-attaching failed too. */
    public static final String STREAM_STALLED = "STREAM_STALLED";

    private HermesErrors() {
    }
}
