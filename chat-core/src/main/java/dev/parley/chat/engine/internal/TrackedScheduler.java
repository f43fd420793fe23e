package dev.parley.chat.engine.internal;

import java.util.List;
import java.util.Set;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A host's scheduler as one engine uses it: the engine's tasks run there, and {@link #shutdown()} cancels
 * the ones still waiting (lease renewals, take-overs, polls, deadlines) without shutting the host's scheduler
 * down, so a closed engine leaves nothing behind on a scheduler it shares. Thread-safe.
 */
public final class TrackedScheduler extends AbstractExecutorService implements ScheduledExecutorService {
    private final ScheduledExecutorService host;
    private final Set<ScheduledFuture<?>> waiting = ConcurrentHashMap.newKeySet();
    private volatile boolean shutdown;

    public TrackedScheduler(ScheduledExecutorService host) {
        this.host = host;
    }

    private <F extends ScheduledFuture<?>> F track(F future) {
        waiting.removeIf(ScheduledFuture::isDone);
        waiting.add(future);
        if (shutdown) {
            future.cancel(false);
        }
        return future;
    }

    @Override
    public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        return track(host.schedule(command, delay, unit));
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        return track(host.schedule(callable, delay, unit));
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        return track(host.scheduleAtFixedRate(command, initialDelay, period, unit));
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        return track(host.scheduleWithFixedDelay(command, initialDelay, delay, unit));
    }

    @Override
    public void execute(Runnable command) {
        schedule(command, 0, TimeUnit.MILLISECONDS);
    }

    /** Cancels this engine's waiting tasks; the host's scheduler goes on. */
    @Override
    public void shutdown() {
        shutdown = true;
        waiting.forEach(future -> future.cancel(false));
        waiting.clear();
    }

    @Override
    public List<Runnable> shutdownNow() {
        shutdown();
        return List.of();
    }

    @Override
    public boolean isShutdown() {
        return shutdown;
    }

    @Override
    public boolean isTerminated() {
        return shutdown;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return true;
    }
}
