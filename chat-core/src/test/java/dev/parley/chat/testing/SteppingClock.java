package dev.parley.chat.testing;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A clock that moves one millisecond forward every time it is read, so that things done one after the
 * other never share a timestamp (orderings by time are then deterministic). Thread-safe.
 */
public final class SteppingClock extends Clock {
    private final AtomicLong millis;

    public SteppingClock(Instant start) {
        this.millis = new AtomicLong(start.toEpochMilli());
    }

    @Override
    public Instant instant() {
        return Instant.ofEpochMilli(millis.getAndIncrement());
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
