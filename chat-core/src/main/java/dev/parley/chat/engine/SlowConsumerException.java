package dev.parley.chat.engine;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;

/**
 * A live subscriber fell more than {@link EngineLimits#subscriberLagLimit()} events behind and was cut off
 * so that it neither slows the run nor grows memory. It reconnects from {@link #lastSeq()}.
 */
public final class SlowConsumerException extends ChatException {
    private static final long serialVersionUID = 1L;

    private final long lastSeq;

    public SlowConsumerException(String runId, long lastSeq) {
        super(ErrorCode.SLOW_CONSUMER, "subscriber of run " + runId + " fell too far behind; resume after seq " + lastSeq);
        this.lastSeq = lastSeq;
    }

    /** The seq of the last event the subscriber received: the cursor to resume from. */
    public long lastSeq() {
        return lastSeq;
    }
}
