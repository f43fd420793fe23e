package dev.parley.bench.web;

import dev.parley.chat.engine.EngineListener;
import java.util.concurrent.atomic.AtomicInteger;

/** Counts the engine's open subscriptions (an SSE stream holds one), on any host. */
public final class SubscriberCounter implements EngineListener {
    private final AtomicInteger open = new AtomicInteger();

    @Override
    public void subscriberOpened(String runId) {
        open.incrementAndGet();
    }

    @Override
    public void subscriberClosed(String runId) {
        open.decrementAndGet();
    }

    public int open() {
        return open.get();
    }
}
