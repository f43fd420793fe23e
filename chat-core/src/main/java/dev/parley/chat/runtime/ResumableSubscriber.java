package dev.parley.chat.runtime;

import java.util.concurrent.Flow;

/**
 * A subscriber to a runtime's stream that keeps where the stream stands in the runtime, so that a host that
 * restarts can follow a run the runtime carries on without it ({@link RuntimeAdapter#reattach}), or stop it
 * ({@link RuntimeAdapter#stopOrphan}).
 *
 * <p>{@link #onResumePoint} marks a place in the stream: a stream re-attached with that token brings the
 * items that followed the mark, and only those, in the same order and the same form (a runtime that
 * replays its own log produces them again from it). So a subscriber that kept some of the items after a
 * mark knows that the first as many items of a re-attached stream are those, and can skip them.
 *
 * <p>Marks are hints. A runtime that never sends them loses only this: its runs cannot be followed after a
 * restart. {@link StreamPublisher} delivers them to a subscriber of this type, in order with the items,
 * from its {@link StreamPublisher.Emitter#resumePoint(String)}; a subscriber of another type never sees them.
 * A mark not yet delivered may be replaced by a later one (the subscriber then sees the later one only).
 *
 * <p>{@code onResumePoint} is signalled under the rules of {@code onNext}: never concurrently with another
 * signal of the same subscription.
 *
 * @param <T> the item type
 */
public interface ResumableSubscriber<T> extends Flow.Subscriber<T> {

    /**
     * The items signalled so far end where {@code resumeToken} points: a stream re-attached with it continues
     * with the item after them. The token is the runtime's own (opaque, not secret, at most a few hundred
     * characters). Must not throw.
     */
    void onResumePoint(String resumeToken);
}
