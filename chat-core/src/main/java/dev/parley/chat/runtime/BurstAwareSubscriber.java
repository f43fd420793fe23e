package dev.parley.chat.runtime;

import java.util.concurrent.Flow;

/**
 * A subscriber to a runtime's stream that wants to know where the runtime's bursts of items begin and
 * end. A runtime that reads its stream in chunks (an HTTP response read into a buffer, many events at a
 * time) opens a burst when it has a chunk in hand and closes it before it waits for the next one. Inside a
 * burst the subscriber may hold back waking its own readers and wake them once at its end: the items come
 * close together, and the end always comes before the runtime waits.
 *
 * <p>Bursts are hints. A runtime that never sends them loses nothing: each item is then shown on its own.
 * {@link StreamPublisher} delivers them to a subscriber of this type, in order with the items, from its
 * {@link StreamPublisher.Emitter#beginBurst()} and {@link StreamPublisher.Emitter#endBurst()}; a
 * subscriber of another type never sees them.
 *
 * <p>Both methods are signalled under the rules of {@code onNext}: never concurrently with another signal
 * of the same subscription. A burst is never nested; every {@code onBurstStart} is followed by an
 * {@code onBurstEnd} before the next {@code onBurstStart} and before {@code onComplete} or {@code onError}.
 *
 * @param <T> the item type
 */
public interface BurstAwareSubscriber<T> extends Flow.Subscriber<T> {

    /** The items that follow, up to {@link #onBurstEnd()}, arrive together. Must not throw. */
    void onBurstStart();

    /** The burst is over: the runtime may now wait before its next item. Must not throw. */
    void onBurstEnd();
}
