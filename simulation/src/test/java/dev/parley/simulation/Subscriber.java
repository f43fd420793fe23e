package dev.parley.simulation;

import dev.parley.chat.event.RunEvent;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Flow;
import org.jspecify.annotations.Nullable;

/**
 * A subscriber to a run's events, as a browser tab is: it asks for a few events at a time, keeps what it
 * got, and may be dropped (then another one continues from its last seq). Thread-safe.
 */
final class Subscriber implements Flow.Subscriber<RunEvent> {
    private static final int BATCH = 8;

    final List<RunEvent> received = new CopyOnWriteArrayList<>();
    private volatile Flow.@Nullable Subscription subscription;
    private volatile boolean completed;
    private volatile @Nullable Throwable error;
    private volatile boolean dropped;
    private int leftInBatch;

    @Override
    public void onSubscribe(Flow.Subscription value) {
        subscription = value;
        synchronized (this) {
            leftInBatch = BATCH;
        }
        value.request(BATCH);
    }

    @Override
    public void onNext(RunEvent event) {
        received.add(event);
        boolean more;
        synchronized (this) {
            more = --leftInBatch == 0;
            if (more) {
                leftInBatch = BATCH;
            }
        }
        Flow.Subscription current = subscription;
        if (more && current != null && !dropped) {
            current.request(BATCH);
        }
    }

    @Override
    public void onError(Throwable throwable) {
        error = throwable;
    }

    @Override
    public void onComplete() {
        completed = true;
    }

    /** Leaves, as a closed tab does. */
    void drop() {
        dropped = true;
        Flow.Subscription current = subscription;
        if (current != null) {
            current.cancel();
        }
    }

    boolean completed() {
        return completed;
    }

    boolean dropped() {
        return dropped;
    }

    @Nullable Throwable error() {
        return error;
    }

    boolean done() {
        return completed || error != null || dropped;
    }

    /** The last seq received, or {@code after} when nothing came. */
    long lastSeq(long after) {
        List<RunEvent> got = received;
        return got.isEmpty() ? after : got.get(got.size() - 1).seq();
    }
}
