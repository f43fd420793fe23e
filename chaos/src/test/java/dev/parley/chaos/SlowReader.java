package dev.parley.chaos;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.SlowConsumerException;
import dev.parley.chat.event.RunEvent;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;

/**
 * A subscriber that takes one event every few milliseconds, far slower than the run writes: the engine
 * cuts it off once it lags ({@link SlowConsumerException}) and it comes back from its last seq, as a
 * browser would. It asks for more on a thread of its own; the engine's delivery threads never wait for it.
 */
final class SlowReader {
    private final ChatEngine engine;
    private final String owner;
    private final String runId;
    private final long pauseMillis;
    private final List<RunEvent> events = new ArrayList<>();
    private final CountDownLatch done = new CountDownLatch(1);
    private int cutOffs;

    SlowReader(ChatEngine engine, String owner, String runId, long pauseMillis) {
        this.engine = engine;
        this.owner = owner;
        this.runId = runId;
        this.pauseMillis = pauseMillis;
        Thread thread = new Thread(this::read, "slow-reader-" + runId);
        thread.setDaemon(true);
        thread.start();
    }

    /** Waits until the reader saw the run's terminal event; its events, in the order they came. */
    List<RunEvent> awaitAll(long seconds) throws InterruptedException {
        boolean reached = done.await(seconds, TimeUnit.SECONDS);
        synchronized (this) {
            if (!reached) {
                throw new AssertionError("the slow reader of " + runId + " did not reach the end; it has " + events.size());
            }
            return List.copyOf(events);
        }
    }

    synchronized int cutOffs() {
        return cutOffs;
    }

    private void read() {
        long cursor = 0;
        while (done.getCount() > 0) {
            Session session = new Session();
            engine.subscribe(owner, runId, cursor).subscribe(session);
            while (!session.over) {
                Flow.Subscription subscription = session.subscription;
                if (subscription != null) {
                    subscription.request(1);
                }
                Rest.sleep(pauseMillis);
            }
            synchronized (this) {
                if (!events.isEmpty()) {
                    cursor = events.get(events.size() - 1).seq();
                }
            }
        }
    }

    /** One subscription, until the engine ends or cuts it. */
    private final class Session implements Flow.Subscriber<RunEvent> {
        volatile Flow.Subscription subscription;
        volatile boolean over;

        @Override
        public void onSubscribe(Flow.Subscription value) {
            subscription = value;
        }

        @Override
        public void onNext(RunEvent event) {
            synchronized (SlowReader.this) {
                events.add(event);
            }
            if (event.event().isTerminal()) {
                done.countDown();
            }
        }

        @Override
        public void onError(Throwable error) {
            if (error instanceof SlowConsumerException) {
                synchronized (SlowReader.this) {
                    cutOffs++;
                }
            } else {
                done.countDown();
            }
            over = true;
        }

        @Override
        public void onComplete() {
            over = true;
            done.countDown();
        }
    }
}
