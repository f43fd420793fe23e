package dev.parley.chat.engine;

import java.util.concurrent.Flow;

/**
 * A subscriber to {@link ChatEngine#subscribe} that writes its output in batches. The engine hands events
 * over in bursts (everything visible, up to the demand, at most a few hundred at a time) and calls
 * {@link #onBatchEnd()} after each burst, on the same delivery thread, before it waits for more. A
 * subscriber that writes to a network can buffer in {@code onNext} and write and flush once per burst:
 * one system call for many small events instead of one each.
 *
 * <p>{@code onBatchEnd} is not called after the terminal event: {@code onComplete} or {@code onError}
 * follows it, and must flush whatever is still buffered. It is called under the same guarantees as
 * {@code onNext}: never concurrently with another signal of the same subscription.
 *
 * @param <T> the element type
 */
public interface BatchingSubscriber<T> extends Flow.Subscriber<T> {

    /** The burst of {@code onNext} calls is over; write out what was buffered. Must not throw. */
    void onBatchEnd();
}
