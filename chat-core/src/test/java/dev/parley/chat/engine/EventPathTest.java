package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.EventCollector;
import dev.parley.chat.testing.InterceptedStore;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** What the event path asks of the store, and how it hands events to subscribers. */
class EventPathTest extends EngineTestSupport {

    /** Counts the store's synchronous seq reservations. */
    private static ChatStore countingReservations(ChatStore delegate, AtomicInteger calls) {
        return InterceptedStore.of(delegate, (method, args, proceed) -> {
            if (method.equals("reserveSeq")) {
                calls.incrementAndGet();
            }
            return proceed.call();
        });
    }

    @Test
    void aLongRunNeverWaitsForASeqReservationAndNeverShowsAnUnreservedSeq() throws Exception {
        InMemoryChatStore inner = new InMemoryChatStore();
        AtomicInteger synchronousReservations = new AtomicInteger();
        store = countingReservations(inner, synchronousReservations);
        int deltas = 150_000;
        CountDownLatch subscribed = new CountDownLatch(1);
        ScriptedRuntime.Script many = Scripts.manyDeltas(deltas);
        ChatEngine engine = engine(ScriptedRuntime.playing((request, p) -> {
            subscribed.await(10, TimeUnit.SECONDS);
            many.play(request, p);
        }), b -> b.limits(EngineLimits.defaults().withMaxPendingEvents(10_000)));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        String runId = engine.startRun(ALICE, threadId, StartRun.of("go")).runId();

        List<String> unreserved = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch done = new CountDownLatch(1);
        AtomicInteger seen = new AtomicInteger();
        engine.subscribe(ALICE, runId, 0).subscribe(new Flow.Subscriber<RunEvent>() {
            @Override
            public void onSubscribe(Flow.Subscription s) {
                s.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(RunEvent event) {
                seen.incrementAndGet();
                long reserved = inner.reservedSeq(runId);
                if (reserved < event.seq()) {
                    unreserved.add("seq " + event.seq() + " seen with the mark at " + reserved);
                }
            }

            @Override
            public void onError(Throwable error) {
                unreserved.add("failed: " + error);
                done.countDown();
            }

            @Override
            public void onComplete() {
                done.countDown();
            }
        });
        subscribed.countDown();
        assertThat(done.await(60, TimeUnit.SECONDS)).as("the run's events all arrive").isTrue();
        awaitRun(engine, runId, RunStatus.SUCCEEDED);

        assertThat(unreserved).as("a client never holds a seq a restart could hand out again").isEmpty();
        assertThat(seen.get()).isGreaterThan(deltas);
        long lastSeq = Await.until(() -> inner.lastSeq(runId), last -> last == seen.get(), "every event stored");
        assertThat(synchronousReservations.get()).as("no event waits for a reservation").isZero();
        assertThat(inner.reservedSeq(runId)).as("later blocks came with the batches").isGreaterThan(lastSeq);
    }

    @Test
    void aBatchingSubscriberHearsTheEndOfEveryBurstButNotAfterTheLastEvent() throws Exception {
        CountDownLatch subscribed = new CountDownLatch(1);
        ScriptedRuntime.Script many = Scripts.manyDeltas(5_000);
        ChatEngine engine = engine(ScriptedRuntime.playing((request, p) -> {
            subscribed.await(10, TimeUnit.SECONDS);
            many.play(request, p);
        }));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        String runId = engine.startRun(ALICE, threadId, StartRun.of("go")).runId();

        List<String> signals = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch done = new CountDownLatch(1);
        engine.subscribe(ALICE, runId, 0).subscribe(new BatchingSubscriber<RunEvent>() {
            @Override
            public void onSubscribe(Flow.Subscription s) {
                s.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(RunEvent event) {
                signals.add(event.event().isTerminal() ? "terminal" : "event");
            }

            @Override
            public void onBatchEnd() {
                signals.add("end");
            }

            @Override
            public void onError(Throwable error) {
                signals.add("error");
                done.countDown();
            }

            @Override
            public void onComplete() {
                signals.add("complete");
                done.countDown();
            }
        });
        subscribed.countDown();
        assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();

        List<String> all = List.copyOf(signals);
        assertThat(all.subList(all.size() - 2, all.size())).containsExactly("terminal", "complete");
        assertThat(all).filteredOn("end"::equals).isNotEmpty();
        int burst = 0;
        for (String signal : all) {
            if (signal.equals("end")) {
                assertThat(burst).as("a burst holds events, and no more than the delivery batch").isBetween(1, 256);
                burst = 0;
            } else {
                burst++;
            }
        }
        assertThat(all).filteredOn("event"::equals).hasSizeGreaterThanOrEqualTo(5_000);
    }
    @Test
    void aRuntimesBurstReachesTheSubscriberAtItsEndAndNothingWaitsPastIt() throws Exception {
        CountDownLatch caughtUp = new CountDownLatch(1);
        CountDownLatch sawAfterBurst = new CountDownLatch(1);
        CountDownLatch sawUncapped = new CountDownLatch(1);
        List<List<String>> batches = Collections.synchronizedList(new ArrayList<>());
        List<String> heldWhileOpen = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger delivered = new AtomicInteger();
        ChatEngine engine = engine(ScriptedRuntime.playing((request, p) -> {
            p.text("before ");
            caughtUp.await(10, TimeUnit.SECONDS);
            p.sleep(50);
            p.beginBurst();
            for (int i = 0; i < 10; i++) {
                p.text("b" + i + " ");
                p.sleep(20);
            }
            if (delivered.get() - 1 > 1) {
                // a delivery still running when the burst began may take its first event, no more
                heldWhileOpen.add("delivered inside the burst: " + (delivered.get() - 1));
            }
            p.endBurst();
            p.text("after ");
            // the runtime waits now: what it emitted before is on its way regardless
            if (!sawAfterBurst.await(5, TimeUnit.SECONDS)) {
                heldWhileOpen.add("the event after the burst did not arrive while the runtime waited");
            }
            p.beginBurst();
            for (int i = 0; i < 3 * 64; i++) {
                p.text("c ");
            }
            // a burst the runtime does not end in time still wakes the subscriber every 64 events
            if (!sawUncapped.await(5, TimeUnit.SECONDS)) {
                heldWhileOpen.add("a long burst held every event back");
            }
            p.endBurst();
            p.finish();
        }));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        String runId = engine.startRun(ALICE, threadId, StartRun.of("go")).runId();

        CountDownLatch done = new CountDownLatch(1);
        List<String> current = new ArrayList<>();
        engine.subscribe(ALICE, runId, 0).subscribe(new BatchingSubscriber<RunEvent>() {
            @Override
            public void onSubscribe(Flow.Subscription s) {
                s.request(Long.MAX_VALUE);
            }

            @Override
            public void onNext(RunEvent event) {
                if (event.event() instanceof dev.parley.chat.event.AgentStreamEvent.TextDelta text) {
                    current.add(text.delta().strip());
                    delivered.incrementAndGet();
                    if (text.delta().equals("before ")) {
                        caughtUp.countDown();
                    } else if (text.delta().equals("after ")) {
                        sawAfterBurst.countDown();
                    } else if (delivered.get() >= 1 + 10 + 1 + 64) {
                        sawUncapped.countDown();
                    }
                }
            }

            @Override
            public void onBatchEnd() {
                if (!current.isEmpty()) {
                    batches.add(List.copyOf(current));
                    current.clear();
                }
            }

            @Override
            public void onError(Throwable error) {
                done.countDown();
            }

            @Override
            public void onComplete() {
                done.countDown();
            }
        });
        assertThat(done.await(30, TimeUnit.SECONDS)).isTrue();

        assertThat(heldWhileOpen).isEmpty();
        // the burst's events come in one delivery batch, however slowly the runtime emitted them
        assertThat(batches).anySatisfy(batch -> assertThat(batch)
                .containsSubsequence("b1", "b2", "b3", "b4", "b5", "b6", "b7", "b8", "b9"));
        awaitRun(engine, runId, RunStatus.SUCCEEDED);
    }
    /** Plays {@code count} deltas, then waits for {@code release} before it finishes. */
    private static ScriptedRuntime.Script deltasThenWait(int count, CountDownLatch release) {
        return (request, p) -> {
            for (int i = 0; i < count; i++) {
                p.text("t" + i + " ");
            }
            release.await(30, TimeUnit.SECONDS);
            p.finish();
        };
    }

    /** Subscribes without demand; {@link #drainAll} then takes every event of the run. */
    private static final class PausedReader implements Flow.Subscriber<RunEvent> {
        final List<Long> seqs = Collections.synchronizedList(new ArrayList<>());
        final CountDownLatch done = new CountDownLatch(1);
        volatile Flow.Subscription subscription;
        volatile Throwable error;

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
        }

        @Override
        public void onNext(RunEvent event) {
            seqs.add(event.seq());
        }

        @Override
        public void onError(Throwable failure) {
            error = failure;
            done.countDown();
        }

        @Override
        public void onComplete() {
            done.countDown();
        }

        void drainAll() {
            subscription.request(Long.MAX_VALUE);
        }
    }

    /** Runs {@code count} deltas past a paused reader, lets it read once they are stored; returns its store reads. */
    private int storeReadsOfAReaderThatFellBehind(int count, EngineLimits limits) throws Exception {
        InMemoryChatStore inner = new InMemoryChatStore();
        AtomicInteger storeReads = new AtomicInteger();
        store = InterceptedStore.of(inner, (method, args, proceed) -> {
            if (method.equals("readEvents")) {
                storeReads.incrementAndGet();
            }
            return proceed.call();
        });
        CountDownLatch release = new CountDownLatch(1);
        ChatEngine engine = engine(ScriptedRuntime.playing(deltasThenWait(count, release)), b -> b.limits(limits));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        String runId = engine.startRun(ALICE, threadId, StartRun.of("go")).runId();
        PausedReader reader = new PausedReader();
        engine.subscribe(ALICE, runId, 0).subscribe(reader);
        Await.until(() -> inner.readEvents(runId, 0, count + 10).size(), n -> n >= count + 2,
                "the run's events are stored");

        reader.drainAll();
        Await.until(() -> reader.seqs.size(), n -> n >= count + 2, "the reader caught up");
        release.countDown();
        assertThat(reader.done.await(10, TimeUnit.SECONDS)).isTrue();
        assertThat(reader.error).isNull();
        List<Long> seqs = List.copyOf(reader.seqs);
        for (int i = 0; i < seqs.size(); i++) {
            assertThat(seqs.get(i)).as("every event once, in order").isEqualTo(i + 1L);
        }
        return storeReads.get();
    }

    @Test
    void aReaderAFewThousandEventsBehindCatchesUpFromMemory() throws Exception {
        int reads = storeReadsOfAReaderThatFellBehind(5_000, EngineLimits.defaults());

        assertThat(reads).as("store reads while catching up").isZero();
    }

    @Test
    void aReaderFurtherBehindThanTheRingReadsTheStoreAndMissesNothing() throws Exception {
        int reads = storeReadsOfAReaderThatFellBehind(20_000,
                EngineLimits.defaults().withSubscriberLagLimit(1_000_000));

        assertThat(reads).as("store reads while catching up").isPositive();
    }

    /**
     * A caller reads the run's state as the run ends and subscribes after the last seq it shows: the end. It
     * completes at once, also when the run is still leaving memory (no event would wake it again; this loop
     * reaches that window only now and then).
     */
    @Test
    void aSubscriberThatStartsAtTheEndCompletesAtOnce() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("done")));
        for (int attempt = 0; attempt < 40; attempt++) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("go " + attempt));
            RunState ended;
            do {
                ended = engine.state(ALICE, ticket.runId());
            } while (!ended.run().status().isTerminal());
            EventCollector after = EventCollector.unbounded()
                    .subscribeTo(engine.subscribe(ALICE, ticket.runId(), ended.lastSeq())).awaitDone(5);
            assertThat(after.completed()).as("attempt " + attempt).isTrue();
            assertThat(after.events()).isEmpty();
        }
    }
}
