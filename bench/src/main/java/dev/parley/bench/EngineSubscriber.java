package dev.parley.bench;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.SlowConsumerException;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * An in-process subscriber of a run's events that does nothing but count them (and hand text deltas to an
 * optional probe). It requests everything; if the engine cuts it off as a slow consumer it resubscribes
 * after its cursor, as a client would reconnect, and counts that.
 */
final class EngineSubscriber implements Flow.Subscriber<RunEvent> {
    private final ChatEngine engine;
    private final String runId;
    private final Consumer<RunEvent> probe;
    private final CountDownLatch done = new CountDownLatch(1);
    private volatile long cursor;
    private volatile long events;
    private volatile long textDeltas;
    private volatile int resubscribes;
    private volatile long terminalNanos;
    private volatile long lastTextDeltaNanos;
    private volatile AgentStreamEvent terminal;
    private volatile Throwable failure;

    EngineSubscriber(ChatEngine engine, String runId, Consumer<RunEvent> probe) {
        this.engine = engine;
        this.runId = runId;
        this.probe = probe;
    }

    EngineSubscriber start() {
        engine.subscribe(Env.OWNER, runId, cursor).subscribe(this);
        return this;
    }

    @Override
    public void onSubscribe(Flow.Subscription s) {
        s.request(Long.MAX_VALUE);
    }

    @Override
    public void onNext(RunEvent event) {
        events++;
        cursor = event.seq();
        AgentStreamEvent e = event.event();
        if (e instanceof AgentStreamEvent.TextDelta) {
            textDeltas++;
            lastTextDeltaNanos = System.nanoTime();
            if (probe != null) {
                probe.accept(event);
            }
        } else if (e.isTerminal()) {
            terminalNanos = System.nanoTime();
            terminal = e;
            done.countDown();
        }
    }

    @Override
    public void onError(Throwable t) {
        if (t instanceof SlowConsumerException && terminal == null) {
            resubscribes++;
            start();
            return;
        }
        failure = t;
        done.countDown();
    }

    @Override
    public void onComplete() {
        if (terminal == null) {
            failure = new IllegalStateException("completed without a terminal event");
            done.countDown();
        }
    }

    /** Waits for the terminal event; returns the System.nanoTime() it arrived. */
    long await(long timeoutSeconds) throws InterruptedException {
        if (!done.await(timeoutSeconds, TimeUnit.SECONDS)) {
            throw new IllegalStateException("run " + runId + ": no terminal event within " + timeoutSeconds + " s (" + events
                    + " events so far)");
        }
        if (failure != null) {
            throw new IllegalStateException("run " + runId + " failed for its subscriber", failure);
        }
        return terminalNanos;
    }

    /** The System.nanoTime() the last text delta arrived (0 before the first). */
    long lastTextDeltaNanos() {
        return lastTextDeltaNanos;
    }

    boolean isDone() {
        return done.getCount() == 0;
    }

    long textDeltas() {
        return textDeltas;
    }

    int resubscribes() {
        return resubscribes;
    }

    AgentStreamEvent terminal() {
        return terminal;
    }
}
