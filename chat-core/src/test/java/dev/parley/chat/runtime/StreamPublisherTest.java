package dev.parley.chat.runtime;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

class StreamPublisherTest {

    /** A subscriber that records everything and requests only when told to. */
    static class Recorder<T> implements Flow.Subscriber<T> {
        final List<T> items = new CopyOnWriteArrayList<>();
        final AtomicReference<Throwable> error = new AtomicReference<>();
        final CountDownLatch done = new CountDownLatch(1);
        volatile Flow.Subscription subscription;

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
        }

        @Override
        public void onNext(T item) {
            items.add(item);
        }

        @Override
        public void onError(Throwable t) {
            error.set(t);
            done.countDown();
        }

        @Override
        public void onComplete() {
            done.countDown();
        }
    }

    @Test
    void aFullBufferBlocksTheProducerUntilTheSubscriberAsks() throws Exception {
        AtomicInteger emitted = new AtomicInteger();
        CountDownLatch producerFinished = new CountDownLatch(1);
        StreamPublisher<Integer> publisher = StreamPublisher.create(4, emitter -> {
            Thread producer = new Thread(() -> {
                for (int i = 0; i < 20; i++) {
                    emitter.emit(i);
                    emitted.incrementAndGet();
                }
                emitter.complete();
                producerFinished.countDown();
            });
            producer.start();
        });
        Recorder<Integer> recorder = new Recorder<>();
        publisher.subscribe(recorder);

        assertThat(producerFinished.await(300, TimeUnit.MILLISECONDS)).as("the producer waits for demand").isFalse();
        assertThat(emitted.get()).isEqualTo(4);
        assertThat(recorder.items).isEmpty();

        recorder.subscription.request(3);
        assertThat(awaitSize(recorder.items, 3)).containsExactly(0, 1, 2);

        recorder.subscription.request(Long.MAX_VALUE);
        assertThat(recorder.done.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(recorder.items).hasSize(20).startsWith(0, 1, 2, 3).endsWith(19);
        assertThat(recorder.error.get()).isNull();
    }

    @Test
    void cancellingRunsTheCancelActionAndReleasesABlockedProducer() throws Exception {
        AtomicBoolean upstreamClosed = new AtomicBoolean();
        AtomicReference<Boolean> lastEmit = new AtomicReference<>();
        CountDownLatch producerReturned = new CountDownLatch(1);
        StreamPublisher<String> publisher = StreamPublisher.create(1, emitter -> {
            emitter.onCancel(() -> upstreamClosed.set(true));
            new Thread(() -> {
                emitter.emit("first");
                lastEmit.set(emitter.emit("blocked"));
                producerReturned.countDown();
            }).start();
        });
        Recorder<String> recorder = new Recorder<>();
        publisher.subscribe(recorder);
        Thread.sleep(100);
        recorder.subscription.cancel();

        assertThat(producerReturned.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(lastEmit.get()).as("an emit after cancel reports the drop").isFalse();
        assertThat(upstreamClosed).isTrue();
        assertThat(recorder.items).isEmpty();
        assertThat(recorder.done.getCount()).as("no terminal signal after cancel").isEqualTo(1);
    }

    @Test
    void normalCompletionDoesNotRunCancelActionsAndBufferedItemsPrecedeAnError() throws Exception {
        AtomicBoolean cancelRan = new AtomicBoolean();
        StreamPublisher<String> publisher = StreamPublisher.create(emitter -> {
            emitter.onCancel(() -> cancelRan.set(true));
            emitter.emit("a");
            emitter.emit("b");
            emitter.fail(new IllegalStateException("connection reset"));
        });
        Recorder<String> recorder = new Recorder<>();
        publisher.subscribe(recorder);
        recorder.subscription.request(10);
        assertThat(recorder.done.await(5, TimeUnit.SECONDS)).isTrue();
        assertThat(recorder.items).containsExactly("a", "b");
        assertThat(recorder.error.get()).hasMessage("connection reset");
        assertThat(cancelRan).isFalse();
    }

    @Test
    void aSecondSubscriberIsRejected() throws Exception {
        StreamPublisher<String> publisher = StreamPublisher.create(emitter -> emitter.complete());
        publisher.subscribe(new Recorder<>());
        Recorder<String> second = new Recorder<>();
        publisher.subscribe(second);
        assertThat(second.done.await(1, TimeUnit.SECONDS)).isTrue();
        assertThat(second.error.get()).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void aProducerThatThrowsFailsTheStream() throws Exception {
        StreamPublisher<String> publisher = StreamPublisher.create(emitter -> {
            throw new java.io.IOException("connection refused");
        });
        Recorder<String> recorder = new Recorder<>();
        publisher.subscribe(recorder);
        assertThat(recorder.done.await(1, TimeUnit.SECONDS)).isTrue();
        assertThat(recorder.error.get()).hasMessage("connection refused");
    }

    /** Records items and burst signals as one sequence: "[" opens a burst, "]" closes it, "done" ends. */
    static class BurstRecorder extends Recorder<String> implements BurstAwareSubscriber<String> {
        final List<String> signals = new CopyOnWriteArrayList<>();
        private final long initialDemand;

        BurstRecorder(long initialDemand) {
            this.initialDemand = initialDemand;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            super.onSubscribe(s);
            s.request(initialDemand);
        }

        @Override
        public void onNext(String item) {
            signals.add(item);
            super.onNext(item);
        }

        @Override
        public void onBurstStart() {
            signals.add("[");
        }

        @Override
        public void onBurstEnd() {
            signals.add("]");
        }

        @Override
        public void onComplete() {
            signals.add("done");
            super.onComplete();
        }
    }

    @Test
    void burstsReachABurstAwareSubscriberInOrderWithTheItems() throws Exception {
        StreamPublisher<String> publisher = StreamPublisher.create(emitter -> {
            emitter.beginBurst();
            emitter.emit("a");
            emitter.emit("b");
            emitter.endBurst();
            emitter.emit("c");
            emitter.beginBurst();
            emitter.endBurst();
            emitter.endBurst();
            emitter.beginBurst();
            emitter.beginBurst();
            emitter.emit("d");
            emitter.complete();
        });
        BurstRecorder recorder = new BurstRecorder(Long.MAX_VALUE);
        publisher.subscribe(recorder);

        assertThat(recorder.done.await(1, TimeUnit.SECONDS)).isTrue();
        // an empty burst is not shown; a repeated begin or end is ignored; the stream's end closes an open burst
        assertThat(recorder.signals).containsExactly("[", "a", "b", "]", "c", "[", "d", "]", "done");
    }

    @Test
    void aBurstAlsoEndsWhenDeliveryStopsForWantOfDemand() throws Exception {
        StreamPublisher<String> publisher = StreamPublisher.create(emitter -> {
            emitter.beginBurst();
            emitter.emit("a");
            emitter.emit("b");
            emitter.endBurst();
            emitter.beginBurst();
            emitter.emit("c");
            emitter.endBurst();
            emitter.complete();
        });
        BurstRecorder recorder = new BurstRecorder(1);
        publisher.subscribe(recorder);
        // "b" and "c" wait for demand; the subscriber is not left inside a burst meanwhile
        assertThat(recorder.signals).containsExactly("[", "a", "]");

        recorder.subscription.request(Long.MAX_VALUE);
        assertThat(recorder.done.await(1, TimeUnit.SECONDS)).isTrue();
        assertThat(recorder.signals).containsExactly("[", "a", "]", "b", "c", "done");
    }

    @Test
    void aPlainSubscriberNeverSeesBursts() throws Exception {
        StreamPublisher<String> publisher = StreamPublisher.create(emitter -> new Thread(() -> {
            emitter.beginBurst();
            emitter.emit("a");
            emitter.endBurst();
            emitter.complete();
        }).start());
        Recorder<String> recorder = new Recorder<>();
        publisher.subscribe(recorder);
        recorder.subscription.request(Long.MAX_VALUE);
        assertThat(recorder.done.await(1, TimeUnit.SECONDS)).isTrue();
        assertThat(recorder.items).containsExactly("a");
        assertThat(recorder.error.get()).isNull();
    }

    @Test
    void aSubscriberThatThrowsFromOnBurstStartIsCancelled() {
        AtomicBoolean cancelled = new AtomicBoolean();
        AtomicBoolean secondDropped = new AtomicBoolean();
        StreamPublisher<String> publisher = StreamPublisher.create(emitter -> {
            emitter.onCancel(() -> cancelled.set(true));
            emitter.beginBurst();
            emitter.emit("a");
            secondDropped.set(!emitter.emit("b"));
        });
        BurstRecorder recorder = new BurstRecorder(Long.MAX_VALUE) {
            @Override
            public void onBurstStart() {
                throw new IllegalStateException("broken subscriber");
            }
        };
        publisher.subscribe(recorder);
        assertThat(cancelled).isTrue();
        assertThat(secondDropped).isTrue();
        assertThat(recorder.signals).isEmpty();
    }

    /** Records items and resume points as one sequence: "@token" is a point, "done" ends. */
    static class PointRecorder extends Recorder<String> implements ResumableSubscriber<String> {
        final List<String> signals = new CopyOnWriteArrayList<>();
        private final long initialDemand;

        PointRecorder(long initialDemand) {
            this.initialDemand = initialDemand;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            super.onSubscribe(s);
            if (initialDemand > 0) {
                s.request(initialDemand);
            }
        }

        @Override
        public void onNext(String item) {
            signals.add(item);
            super.onNext(item);
        }

        @Override
        public void onResumePoint(String resumeToken) {
            signals.add("@" + resumeToken);
        }

        @Override
        public void onComplete() {
            signals.add("done");
            super.onComplete();
        }
    }

    @Test
    void resumePointsReachAResumableSubscriberRightAfterTheItemsBeforeThem() throws Exception {
        StreamPublisher<String> publisher = StreamPublisher.create(emitter -> {
            emitter.resumePoint("0");
            emitter.emit("a");
            emitter.resumePoint("1");
            emitter.emit("b");
            emitter.emit("c");
            emitter.resumePoint("2");
            emitter.emit("d");
            emitter.complete();
        });
        PointRecorder recorder = new PointRecorder(Long.MAX_VALUE);
        publisher.subscribe(recorder);

        assertThat(recorder.done.await(1, TimeUnit.SECONDS)).isTrue();
        assertThat(recorder.signals).containsExactly("@0", "a", "@1", "b", "c", "@2", "d", "done");
    }

    @Test
    void aResumePointWaitsForTheItemsBeforeItButNotForDemand() throws Exception {
        StreamPublisher<String> publisher = StreamPublisher.create(emitter -> {
            emitter.emit("a");
            emitter.resumePoint("1");
            emitter.emit("b");
            emitter.resumePoint("2");
            emitter.emit("c");
            emitter.resumePoint("3");
            emitter.resumePoint("3+");
        });
        PointRecorder recorder = new PointRecorder(0);
        publisher.subscribe(recorder);
        assertThat(recorder.signals).as("no item was asked for: no point is due").isEmpty();

        recorder.subscription.request(1);
        assertThat(recorder.signals).containsExactly("a", "@1");
        recorder.subscription.request(2);
        // two points not yet delivered with no item between them: the later one stands for both
        assertThat(recorder.signals).containsExactly("a", "@1", "b", "@2", "c", "@3+");
    }

    @Test
    void aPlainSubscriberNeverSeesResumePoints() throws Exception {
        StreamPublisher<String> publisher = StreamPublisher.create(emitter -> {
            emitter.resumePoint("0");
            emitter.emit("a");
            emitter.resumePoint("1");
            emitter.complete();
        });
        Recorder<String> recorder = new Recorder<>();
        publisher.subscribe(recorder);
        recorder.subscription.request(Long.MAX_VALUE);
        assertThat(recorder.done.await(1, TimeUnit.SECONDS)).isTrue();
        assertThat(recorder.items).containsExactly("a");
        assertThat(recorder.error.get()).isNull();
    }

    @Test
    void aSubscriberThatThrowsFromOnResumePointIsCancelled() {
        AtomicBoolean cancelled = new AtomicBoolean();
        AtomicBoolean secondDropped = new AtomicBoolean();
        StreamPublisher<String> publisher = StreamPublisher.create(emitter -> {
            emitter.onCancel(() -> cancelled.set(true));
            emitter.emit("a");
            emitter.resumePoint("1");
            secondDropped.set(!emitter.emit("b"));
        });
        PointRecorder recorder = new PointRecorder(Long.MAX_VALUE) {
            @Override
            public void onResumePoint(String resumeToken) {
                throw new IllegalStateException("broken subscriber");
            }
        };
        publisher.subscribe(recorder);
        assertThat(cancelled).isTrue();
        assertThat(secondDropped).isTrue();
        assertThat(recorder.signals).containsExactly("a");
    }

    private static <T> List<T> awaitSize(List<T> list, int size) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (list.size() < size && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        return list;
    }
}
