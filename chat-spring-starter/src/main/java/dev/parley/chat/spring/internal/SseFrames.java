package dev.parley.chat.spring.internal;

import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;

/**
 * What an SSE run stream writes: the text of each event's frame, and when the stream may end before the run
 * does. Called by one stream only, never concurrently (under the stream's lock); must not block.
 */
public interface SseFrames {
    /** Text written before the first event; empty for none. */
    default String prelude() {
        return "";
    }

    /** The SSE text for {@code event} (whole frames, each ending in a blank line); empty to write nothing. */
    String frame(RunEvent event);

    /** Text written at the end of a burst of events; empty for none. */
    default String batchEnd() {
        return "";
    }

    /** Text written when the run's event stream failed (the response completes after it); empty for none. */
    default String failed(Throwable error) {
        return "";
    }

    /** True once the last frame was produced: the stream completes without waiting for the run's end. */
    default boolean ended() {
        return false;
    }

    /** The client went away before the stream ended (not called for a stream cut for a slow client). */
    default void clientLeft() {
    }

    /** Parley's own frames: {@code id:} = seq, {@code event:} = type, {@code data:} = the run event as JSON. */
    static SseFrames runEvents() {
        return event -> "id:" + event.seq() + "\nevent:" + event.type() + "\ndata:" + ChatJson.shared().write(event)
                + "\n\n";
    }
}
