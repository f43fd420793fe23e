package dev.parley.chat.spring.internal;

import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Sends a heartbeat comment on every open SSE stream at a fixed interval, from one thread for all
 * streams, so that idle streams survive proxies and the runtime's quiet periods.
 */
public final class Heartbeats implements AutoCloseable {
    private final Set<SseRunStream> streams = ConcurrentHashMap.newKeySet();
    private final ScheduledExecutorService timer;

    public Heartbeats(Duration interval) {
        this.timer = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread thread = new Thread(r, "parley-sse-heartbeat");
            thread.setDaemon(true);
            return thread;
        });
        long millis = Math.max(1, interval.toMillis());
        timer.scheduleAtFixedRate(this::beat, millis, millis, TimeUnit.MILLISECONDS);
    }

    void register(SseRunStream stream) {
        streams.add(stream);
    }

    void unregister(SseRunStream stream) {
        streams.remove(stream);
    }

    /** How many streams are open now. */
    public int openStreams() {
        return streams.size();
    }

    private void beat() {
        for (SseRunStream stream : streams) {
            stream.heartbeat();
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
