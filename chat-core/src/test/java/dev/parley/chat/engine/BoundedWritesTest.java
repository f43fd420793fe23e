package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.testing.InterceptedStore;
import dev.parley.chat.testing.ScriptedRuntime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The batch writer's transactions are capped ({@link EngineLimits#maxBatchEvents()},
 * {@link EngineLimits#maxBatchBytes()}): a store that fell behind catches up in bounded transactions, and
 * a flush that must finish before an input request is shown or a run ends writes that run's work only.
 */
class BoundedWritesTest extends EngineTestSupport {
    private static final int EVENT_CAP = 500;

    /** One {@code ChatStore.write} the store took: its events, and the run each came from. */
    private record Write(List<RunEvent> events) {
        long eventsOf(String runId) {
            return events.stream().filter(e -> e.runId().equals(runId)).count();
        }

        long textChars() {
            return events.stream().mapToLong(e -> e.event() instanceof AgentStreamEvent.TextDelta d ? d.delta().length() : 0)
                    .sum();
        }

        boolean holds(String runId, String type) {
            return events.stream().anyMatch(e -> e.runId().equals(runId) && e.type().equals(type));
        }
    }

    private final List<Write> writes = new CopyOnWriteArrayList<>();
    /** While set, the store's next write of events blocks until {@link #resume} opens (a stalled disk). */
    private final AtomicBoolean stalling = new AtomicBoolean();
    private final CountDownLatch resume = new CountDownLatch(1);
    private final AtomicInteger stalled = new AtomicInteger();
    /** Microseconds each stored event costs the store (a slow disk). */
    private volatile long microsPerEvent;

    BoundedWritesTest() {
        InMemoryChatStore real = new InMemoryChatStore();
        store = InterceptedStore.of(real, (method, args, proceed) -> {
            if (method.equals("write")) {
                StoreBatch batch = (StoreBatch) args[0];
                if (!batch.events().isEmpty() && stalling.compareAndSet(true, false)) {
                    stalled.incrementAndGet();
                    assertThat(resume.await(30, TimeUnit.SECONDS)).isTrue();
                }
                long micros = microsPerEvent * batch.events().size();
                if (micros > 0) {
                    TimeUnit.MICROSECONDS.sleep(micros);
                }
                Object result = proceed.call();
                writes.add(new Write(batch.events()));
                return result;
            }
            return proceed.call();
        });
    }

    /** Streams {@code count} deltas of {@code size} characters once {@code go} opens, then finishes once {@code end} opens. */
    private static ScriptedRuntime.Script burst(int count, int size, CountDownLatch go, CountDownLatch end,
            AtomicInteger emitted) {
        String delta = "x".repeat(size - 1) + " ";
        return (request, p) -> {
            assertThat(go.await(30, TimeUnit.SECONDS)).isTrue();
            for (int i = 0; i < count; i++) {
                p.text(delta);
                emitted.incrementAndGet();
            }
            assertThat(end.await(30, TimeUnit.SECONDS)).isTrue();
            p.finish();
        };
    }

    /**
     * Runs one burst while a write of the store hangs, then lets it go on: the store is then far behind.
     * Returns the run's id once it succeeded.
     */
    private String burstWhileTheStoreStalls(ChatEngine engine, int count, int size) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch end = new CountDownLatch(1);
        AtomicInteger emitted = new AtomicInteger();
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        scripts.set(burst(count, size, go, end, emitted));
        String runId = engine.startRun(ALICE, threadId, StartRun.of("go")).runId();
        stalling.set(true);
        go.countDown();
        await(emitted::get, n -> n == count, "the burst to be emitted");
        await(stalled::get, n -> n == 1, "a write to hang");
        resume.countDown();
        end.countDown();
        awaitRun(engine, runId, RunStatus.SUCCEEDED);
        return runId;
    }

    private final AtomicReference<ScriptedRuntime.Script> scripts = new AtomicReference<>();

    private ChatEngine engineWith(EngineLimits limits) {
        return engine(ScriptedRuntime.of(request -> scripts.get()), b -> b.limits(limits));
    }

    private List<Long> storedSeqs(String runId) {
        List<Long> seqs = new ArrayList<>();
        store.readEvents(runId, 0, Integer.MAX_VALUE).forEach(e -> seqs.add(e.seq()));
        return seqs;
    }

    @Test
    void aStoreThatFellBehindCatchesUpInTransactionsOfAtMostTheEventCap() throws Exception {
        ChatEngine engine = engineWith(EngineLimits.defaults().withBatchCaps(EVENT_CAP, Integer.MAX_VALUE));

        String runId = burstWhileTheStoreStalls(engine, 12_000, 4);

        assertThat(writes).allSatisfy(w -> assertThat(w.events()).hasSizeLessThanOrEqualTo(EVENT_CAP));
        assertThat(writes.stream().filter(w -> w.eventsOf(runId) > 0)).hasSizeGreaterThanOrEqualTo(12_000 / EVENT_CAP);
        List<Long> seqs = storedSeqs(runId);
        assertThat(seqs).hasSize(seqs.get(seqs.size() - 1).intValue()).doesNotHaveDuplicates().isSorted();
        assertThat(seqs.size()).isGreaterThan(12_000);
    }

    @Test
    void aStoreThatFellBehindCatchesUpInTransactionsOfAtMostTheByteCap() throws Exception {
        int byteCap = 64 * 1024;
        ChatEngine engine = engineWith(EngineLimits.defaults().withBatchCaps(100_000, byteCap));

        String runId = burstWhileTheStoreStalls(engine, 400, 2_000);

        assertThat(writes).allSatisfy(w -> assertThat(w.textChars()).isLessThanOrEqualTo(byteCap));
        assertThat(writes.stream().mapToLong(w -> w.eventsOf(runId)).sum()).isGreaterThanOrEqualTo(400);
        List<Long> seqs = storedSeqs(runId);
        assertThat(seqs).hasSize(seqs.get(seqs.size() - 1).intValue()).doesNotHaveDuplicates().isSorted();
    }

    @Test
    void anInputRequestAndARunsEndWaitOnlyForTheirOwnRunsTransactions() throws Exception {
        microsPerEvent = 50;
        AtomicLong writesWhenAsked = new AtomicLong(-1);
        AtomicLong backlogWhenAsked = new AtomicLong();
        AtomicLong storedOfBusy = new AtomicLong();
        CountDownLatch go = new CountDownLatch(1);
        CountDownLatch end = new CountDownLatch(1);
        AtomicInteger emitted = new AtomicInteger();
        ScriptedRuntime.Script busy = burst(40_000, 4, go, end, emitted);
        ScriptedRuntime.Script asking = (request, p) -> {
            p.emit(new AgentStreamEvent.ClarifyRequested(request.runId() + ":clarify", "ask-1", "Which?",
                    List.of("a", "b"), false, null));
            p.awaitAnswer("ask-1");
            p.text("chosen");
            p.finish();
        };
        AtomicReference<String> busyRun = new AtomicReference<>();
        ChatEngine engine = engine(ScriptedRuntime.of(request -> request.userMessage().equals("busy") ? busy : asking),
                b -> b.limits(EngineLimits.defaults().withBatchCaps(EVENT_CAP, Integer.MAX_VALUE))
                        .listener(new EngineListener() {
                            @Override
                            public void eventAppended(RunEvent event) {
                                if (event.type().equals(AgentStreamEvent.InputRequested.TYPE)) {
                                    writesWhenAsked.set(writes.size());
                                    backlogWhenAsked.set(emitted.get() - storedOfBusy.get());
                                }
                            }
                        }));
        String busyThread = engine.createThread(ALICE, NewThread.empty()).id();
        String askingThread = engine.createThread(ALICE, NewThread.empty()).id();
        busyRun.set(engine.startRun(ALICE, busyThread, StartRun.of("busy")).runId());
        go.countDown();
        await(emitted::get, n -> n >= 20_000, "the busy run to be well ahead of the store");
        storedOfBusy.set(writes.stream().mapToLong(w -> w.eventsOf(busyRun.get())).sum());

        String askingRun = engine.startRun(ALICE, askingThread, StartRun.of("ask")).runId();
        await(() -> engine.state(ALICE, askingRun).pendingInputs(), inputs -> !inputs.isEmpty(), "the question to show");
        engine.answer(ALICE, askingRun, "ask-1", List.of("a"));
        awaitRun(engine, askingRun, RunStatus.SUCCEEDED);
        long busyStoredWhenAskingEnded = writes.stream().mapToLong(w -> w.eventsOf(busyRun.get())).sum();
        end.countDown();
        awaitRun(engine, busyRun.get(), RunStatus.SUCCEEDED);

        assertThat(backlogWhenAsked.get()).as("the store was behind when the question came").isGreaterThan(4L * EVENT_CAP);
        assertThat(busyStoredWhenAskingEnded).as("the asking run ended before the busy run's backlog was stored")
                .isLessThan(emitted.get());
        List<Write> all = new ArrayList<>(writes);
        int question = indexOf(all, askingRun, AgentStreamEvent.InputRequested.TYPE);
        int finish = indexOf(all, askingRun, AgentStreamEvent.RunFinished.TYPE);
        assertThat(all).allSatisfy(w -> assertThat(w.events()).hasSizeLessThanOrEqualTo(EVENT_CAP));
        long busyWritesBetween = all.subList((int) writesWhenAsked.get(), question).stream()
                .filter(w -> w.eventsOf(busyRun.get()) > 0).count();
        assertThat(busyWritesBetween).as("the busy run's transactions the question waited for").isLessThanOrEqualTo(2);
        assertThat(finish).isGreaterThan(question);
        assertThat(storedSeqs(busyRun.get())).hasSize(40_000 + 3).isSorted().doesNotHaveDuplicates();
    }

    private static int indexOf(List<Write> writes, String runId, String type) {
        for (int i = 0; i < writes.size(); i++) {
            if (writes.get(i).holds(runId, type)) {
                return i;
            }
        }
        throw new AssertionError("no write stored " + type + " of " + runId);
    }
}
