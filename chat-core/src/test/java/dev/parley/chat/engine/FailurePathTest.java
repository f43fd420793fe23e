package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.testing.InterceptedStore;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Failures at points a run's life does not control — the store, the executor, shutdown, the queue — each
 * reproduced from the review that found it: the run must still reach a terminal event, be stored so, and
 * leave its thread free for the next message.
 */
class FailurePathTest extends EngineTestSupport {
    private final InMemoryChatStore memory = new InMemoryChatStore();
    private final List<ExecutorService> pools = new ArrayList<>();

    @AfterEach
    void stopPools() {
        pools.forEach(ExecutorService::shutdownNow);
    }

    private static ChatException injected(String what) {
        return new ChatException(ErrorCode.STORE_FAILURE, "injected failure: " + what);
    }

    private static List<RunEvent> eventsOf(ChatStore store, String runId) {
        return store.readEvents(runId, 0, 10_000);
    }

    /** Starts runs on the thread until one is accepted (its previous run's end may still be on its way). */
    private static RunTicket startWhenFree(ChatEngine engine, String threadId, String text) {
        return await(() -> {
            try {
                return engine.startRun(ALICE, threadId, StartRun.of(text));
            } catch (ChatException e) {
                if (e.code() != ErrorCode.CONFLICT) {
                    throw e;
                }
                return null;
            }
        }, ticket -> ticket != null, "the thread to take a new message");
    }

    // ------------------------------------------------------------------ review defect 3

    @Test
    void aStoreErrorWhileTheRunLaunchesEndsItFailedAndFreesTheThread() {
        AtomicBoolean failNextLaunchRead = new AtomicBoolean(true);
        store = InterceptedStore.of(memory, (method, args, proceed) -> {
            if (method.equals("findThread") && Thread.currentThread().getName().startsWith("parley-work")
                    && failNextLaunchRead.getAndSet(false)) {
                throw injected("reading the thread at launch");
            }
            return proceed.call();
        });
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("ok")));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = engine.startRun(ALICE, threadId, StartRun.of("hello"));

        Run failed = awaitRun(engine, first.runId(), RunStatus.FAILED);
        assertThat(failed.error().code()).isEqualTo("STORE_FAILURE");
        await(() -> memory.findRun(first.runId()).orElseThrow().status(), s -> s == RunStatus.FAILED, "the end stored");
        List<RunEvent> events = eventsOf(memory, first.runId());
        assertThat(events.get(0).event()).isInstanceOf(AgentStreamEvent.RunStarted.class);
        assertThat(events.get(events.size() - 1).event()).isInstanceOf(AgentStreamEvent.RunFailed.class);

        RunTicket next = engine.startRun(ALICE, threadId, StartRun.of("again"));
        awaitRun(engine, next.runId(), RunStatus.SUCCEEDED);
    }

    // ------------------------------------------------------------------ review defect 4

    private static boolean carriesPoison(StoreBatch batch) {
        return batch.events().stream().anyMatch(e -> e.event() instanceof AgentStreamEvent.TextDelta delta
                && delta.delta().equals("POISON"));
    }

    @Test
    void aRowTheStoreRefusesIsIsolatedItsRunFailedAndEverythingElseStored() {
        store = InterceptedStore.of(memory, (method, args, proceed) -> {
            if (method.equals("write") && carriesPoison((StoreBatch) args[0])) {
                throw injected("a row the database refuses");
            }
            return proceed.call();
        });
        ScriptedRuntime runtime = ScriptedRuntime.of(request -> request.userMessage().equals("poison")
                ? (r, p) -> {
                    p.text("fine ");
                    p.text("POISON");
                    p.awaitCancel();
                }
                : Scripts.slow(40, 10));
        ChatEngine engine = engine(runtime);
        String healthyThread = engine.createThread(ALICE, NewThread.empty()).id();
        String poisonedThread = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket healthy = engine.startRun(ALICE, healthyThread, StartRun.of("healthy"));
        RunTicket poisoned = engine.startRun(ALICE, poisonedThread, StartRun.of("poison"));

        Run failed = awaitRun(engine, poisoned.runId(), RunStatus.FAILED);
        assertThat(failed.error().code()).isEqualTo("STORE_FAILURE");
        awaitRun(engine, healthy.runId(), RunStatus.SUCCEEDED);
        await(() -> memory.findRun(healthy.runId()).orElseThrow().status(), s -> s == RunStatus.SUCCEEDED,
                "the healthy run stored as it ended");
        await(() -> memory.findRun(poisoned.runId()).orElseThrow().status(), s -> s == RunStatus.FAILED,
                "the poisoned run stored as failed");

        List<RunEvent> stored = eventsOf(memory, poisoned.runId());
        assertThat(stored).extracting(RunEvent::seq).as("no gap where the refused event was")
                .containsExactlyElementsOf(java.util.stream.LongStream.rangeClosed(1, stored.size()).boxed().toList());
        assertThat(stored).filteredOn(e -> e.event() instanceof AgentStreamEvent.StatusUpdate status
                && status.text().contains("could not be stored")).as("the refused event is recorded").hasSize(1);
        assertThat(stored.get(stored.size() - 1).event()).isInstanceOfSatisfying(AgentStreamEvent.RunFailed.class,
                end -> assertThat(end.code()).isEqualTo("STORE_FAILURE"));
        List<RunEvent> healthyEvents = eventsOf(memory, healthy.runId());
        assertThat(healthyEvents).extracting(RunEvent::seq).as("the other run's events are all stored")
                .containsExactlyElementsOf(java.util.stream.LongStream.rangeClosed(1, healthyEvents.size()).boxed().toList());
        assertThat(healthyEvents.get(healthyEvents.size() - 1).event())
                .isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));

        awaitRun(engine, startWhenFree(engine, poisonedThread, "after").runId(), RunStatus.SUCCEEDED);
        awaitRun(engine, startWhenFree(engine, healthyThread, "after").runId(), RunStatus.SUCCEEDED);
    }

    /**
     * A run's end in a part the store kept refusing whole, then written row by row: the run's record, which
     * says it ended, was stored before its end event, so for a moment the store said the run had ended
     * while its log lacked the end (a subscriber reading the store completes then without it, and a
     * compaction takes the run and makes up an end). The record of a run that ends is now written after the
     * part's events, as a batch of the writer stores it.
     */
    @Test
    void aPartWrittenRowByRowStoresTheRunsEndBeforeTheRecordThatSaysItEnded() {
        List<String> endedAheadOfTheirEnd = new java.util.concurrent.CopyOnWriteArrayList<>();
        store = InterceptedStore.of(memory, (method, args, proceed) -> {
            if (method.equals("write")) {
                StoreBatch batch = (StoreBatch) args[0];
                boolean ends = batch.runs().stream().anyMatch(run -> run.status().isTerminal());
                if (ends && !batch.events().isEmpty()) {
                    throw injected("a part the store keeps refusing whole");
                }
                for (Run run : batch.runs()) {
                    if (run.status().isTerminal()
                            && eventsOf(memory, run.id()).stream().noneMatch(e -> e.event().isTerminal())) {
                        endedAheadOfTheirEnd.add(run.id());
                    }
                }
            }
            return proceed.call();
        });
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.manyDeltas(5)));
        RunTicket ticket = engine.startRun(ALICE, engine.createThread(ALICE, NewThread.empty()).id(),
                StartRun.of("go"));

        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        await(() -> memory.findRun(ticket.runId()).orElseThrow().status(), s -> s == RunStatus.SUCCEEDED,
                "the run stored as it ended");
        List<RunEvent> stored = eventsOf(memory, ticket.runId());
        assertThat(stored).filteredOn(e -> e.event() instanceof AgentStreamEvent.StatusUpdate).as("rows left out")
                .isEmpty();
        assertThat(stored.get(stored.size() - 1).event()).isInstanceOf(AgentStreamEvent.RunFinished.class);
        assertThat(endedAheadOfTheirEnd).as("runs stored as ended before their end event").isEmpty();
    }

    @Test
    void rowsRefusedJustBeforeTheStoreCameBackAreWrittenNotLeftOut() throws Exception {
        AtomicBoolean down = new AtomicBoolean();
        CountDownLatch back = new CountDownLatch(1);
        CountDownLatch go = new CountDownLatch(1);
        store = InterceptedStore.of(memory, (method, args, proceed) -> {
            if (method.equals("reserveSeq") && (long) args[1] == 0 && down.compareAndSet(true, false)) {
                back.countDown();
            }
            if (down.get() && (method.equals("write") || method.equals("reserveSeq"))) {
                throw injected("the database is unreachable");
            }
            return proceed.call();
        });
        ChatEngine engine = engine(ScriptedRuntime.playing((request, p) -> {
            go.await();
            p.text("kept ");
            p.text("whole");
            back.await();
            p.finish();
        }));
        RunTicket ticket = engine.startRun(ALICE, engine.createThread(ALICE, NewThread.empty()).id(), StartRun.of("go"));
        down.set(true);
        go.countDown();

        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        await(() -> memory.findRun(ticket.runId()).orElseThrow().status(), s -> s == RunStatus.SUCCEEDED,
                "the run stored as it ended");
        List<RunEvent> stored = eventsOf(memory, ticket.runId());
        assertThat(stored).filteredOn(e -> e.event() instanceof AgentStreamEvent.StatusUpdate).as("rows left out").isEmpty();
        assertThat(stored).filteredOn(e -> e.event() instanceof AgentStreamEvent.TextDelta).hasSize(2);
        assertThat(((AssistantMessage) memory.findMessage(ticket.assistantMessageId()).orElseThrow())
                .text()).isEqualTo("kept whole");
    }

    // ------------------------------------------------------------------ review defect 5

    /** Refuses its first {@code refusals} tasks, as a saturated bounded pool does, then runs them. */
    private ExecutorService refusingFirst(int refusals) {
        ExecutorService pool = Executors.newCachedThreadPool();
        pools.add(pool);
        AtomicInteger left = new AtomicInteger(refusals);
        return new AbstractExecutorService() {
            @Override
            public void execute(Runnable task) {
                if (left.getAndDecrement() > 0) {
                    throw new RejectedExecutionException("the pool is full");
                }
                pool.execute(task);
            }

            @Override
            public void shutdown() {
                pool.shutdown();
            }

            @Override
            public List<Runnable> shutdownNow() {
                return pool.shutdownNow();
            }

            @Override
            public boolean isShutdown() {
                return pool.isShutdown();
            }

            @Override
            public boolean isTerminated() {
                return pool.isTerminated();
            }

            @Override
            public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
                return pool.awaitTermination(timeout, unit);
            }
        };
    }

    @Test
    void aLaunchTheExecutorRefusesEndsFailedAfterItsStartAndFreesTheThread() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("ok")), b -> b.executor(refusingFirst(1)));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket refused = engine.startRun(ALICE, threadId, StartRun.of("hello"));

        Run failed = awaitRun(engine, refused.runId(), RunStatus.FAILED);
        assertThat(failed.error().code()).isEqualTo("INTERNAL");
        assertThat(store.findRun(refused.runId()).orElseThrow().status()).isEqualTo(RunStatus.FAILED);
        assertThat(eventsOf(store, refused.runId())).extracting(e -> e.event().getClass().getSimpleName())
                .containsExactly("RunStarted", "MessagesSnapshot", "RunFailed");

        RunTicket next = engine.startRun(ALICE, threadId, StartRun.of("again"));
        awaitRun(engine, next.runId(), RunStatus.SUCCEEDED);
    }

    @Test
    void aClosedEngineRefusesNewRunsAndStoresNothing() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("ok")));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        engine.close();

        assertCode(ErrorCode.RUNTIME_UNAVAILABLE, () -> engine.startRun(ALICE, threadId, StartRun.of("hello")));
        assertThat(store.findThreadRuns(threadId, EnumSet.allOf(RunStatus.class))).isEmpty();
        assertThat(store.listTopLevelMessages(threadId, null, 10)).isEmpty();
    }

    // ------------------------------------------------------------------ review defect 6

    private Run leftRunning(ChatStore target, String runId) {
        Instant t0 = Instant.parse("2026-11-29T10:00:00Z");
        String threadId = "t-" + runId;
        target.createThread(new ChatThread(threadId, ALICE, "t", null, null, null, ThreadStatus.ACTIVE, t0, t0));
        UserMessage user = new UserMessage(runId + "-u", threadId, runId, null, MessageStatus.COMPLETED, t0, "hello");
        AssistantMessage answer = new AssistantMessage(runId + "-a", threadId, runId, user.id(),
                MessageStatus.IN_PROGRESS, t0, "", null, null);
        Run run = new Run(runId, threadId, ALICE, RunStatus.RUNNING, user.id(), answer.id(), "hello", null, null, null,
                Map.of(), t0, t0, null, null, null, null);
        target.write(StoreBatch.builder().run(run).message(user).message(answer)
                .event(new RunEvent(runId, 1, t0.toEpochMilli(), new AgentStreamEvent.RunStarted(threadId, runId, answer.id())))
                .reserveSeq(runId, 4096).build());
        return run;
    }

    @Test
    void aRecoveredRunWhoseSeqCannotBeReservedStillEndsInterruptedAndFreesTheThread() {
        Run run = leftRunning(memory, "r1");
        store = InterceptedStore.of(memory, (method, args, proceed) -> {
            if (method.equals("reserveSeq")) {
                throw injected("reserving seqs");
            }
            return proceed.call();
        });
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("ok")));

        awaitRun(engine, run.id(), RunStatus.INTERRUPTED);
        await(() -> memory.findRun(run.id()).orElseThrow().status(), s -> s == RunStatus.INTERRUPTED, "the end stored");
        awaitRun(engine, startWhenFree(engine, run.threadId(), "next").runId(), RunStatus.SUCCEEDED);
    }

    @Test
    void aRunThatCouldNotBeRecoveredAtStartIsRecoveredOnceTheStoreAnswers() {
        Run run = leftRunning(memory, "r2");
        AtomicInteger failedReads = new AtomicInteger();
        store = InterceptedStore.of(memory, (method, args, proceed) -> {
            if (method.equals("readEvents") && failedReads.getAndIncrement() < 2) {
                throw injected("reading the run's events");
            }
            return proceed.call();
        });
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("ok")));

        await(() -> memory.findRun(run.id()).orElseThrow().status(), s -> s == RunStatus.INTERRUPTED,
                "the run recovered after all");
        awaitRun(engine, startWhenFree(engine, run.threadId(), "next").runId(), RunStatus.SUCCEEDED);
    }

    // ------------------------------------------------------------------ review defect 7

    @Test
    void aHostActionWhoseExecutionCannotBeClaimedGoesBackToTheRuntimeAsAnErrorAndRunsNothing() {
        store = InterceptedStore.of(memory, (method, args, proceed) -> {
            if (method.equals("claimHostAction")) {
                throw injected("claiming the execution");
            }
            return proceed.call();
        });
        AtomicInteger handled = new AtomicInteger();
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.callsHostAction("order", "{}"));
        ChatEngine engine = engine(runtime, b -> b.hostAction(new HostAction(new HostToolSpec("order", "Orders", "{}"),
                call -> "ordered #" + handled.incrementAndGet())));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("order it"));

        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(handled).as("without a claim the handler does not run").hasValue(0);
        assertThat(runtime.toolResults()).singleElement().satisfies(r -> assertThat(r.error()).isTrue());
        assertThat(((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text())
                .startsWith("The tool failed: ");
    }

    @Test
    void aHostActionResultThatCannotBeRecordedStillReachesTheRuntime() {
        store = InterceptedStore.of(memory, (method, args, proceed) -> {
            if (method.equals("completeHostAction")) {
                throw injected("recording the result");
            }
            return proceed.call();
        });
        AtomicInteger handled = new AtomicInteger();
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.callsHostAction("order", "{}"));
        ChatEngine engine = engine(runtime, b -> b.hostAction(new HostAction(new HostToolSpec("order", "Orders", "{}"),
                call -> "ordered #" + handled.incrementAndGet())));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("order it"));

        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(handled).hasValue(1);
        assertThat(runtime.toolResults()).singleElement().satisfies(r -> {
            assertThat(r.error()).isFalse();
            assertThat(r.result()).isEqualTo("ordered #1");
        });
        assertThat(((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text())
                .isEqualTo("The tool said: ordered #1");
    }

    // ------------------------------------------------------------------ review defect 8

    @Test
    void closingLeavesQueuedRunsQueuedForTheNextEngine() {
        ScriptedRuntime runtime = ScriptedRuntime.of(request -> request.userMessage().equals("first")
                ? Scripts.streamsUntilCancelled() : Scripts.instant("ok"));
        ChatEngine engine = engine(runtime, b -> b.doubleTexting(DoubleTexting.ENQUEUE));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = engine.startRun(ALICE, threadId, StartRun.of("first"));
        await(() -> runtime.isPlaying(first.runId()), playing -> playing, "the first run to play");
        RunTicket queued = engine.startRun(ALICE, threadId, StartRun.of("second"));
        assertThat(queued.status()).isEqualTo(RunStatus.QUEUED);

        engine.close();
        assertThat(store.findRun(first.runId()).orElseThrow().status()).isEqualTo(RunStatus.INTERRUPTED);
        assertThat(store.findRun(queued.runId()).orElseThrow().status()).isEqualTo(RunStatus.QUEUED);
        assertThat(runtime.requests()).extracting(r -> r.userMessage()).containsExactly("first");

        ChatEngine next = engine(runtime);
        awaitRun(next, queued.runId(), RunStatus.SUCCEEDED);
    }

    // ------------------------------------------------------------------ review defect 11

    @Test
    void interruptingMessagesRunInTheOrderTheyArrived() {
        ScriptedRuntime runtime = ScriptedRuntime.of(request -> request.userMessage().equals("first")
                ? slowToStop() : Scripts.instant("ok"));
        ChatEngine engine = engine(runtime, b -> b.doubleTexting(DoubleTexting.INTERRUPT));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = engine.startRun(ALICE, threadId, StartRun.of("first"));
        await(() -> runtime.isPlaying(first.runId()), playing -> playing, "the first run to play");
        RunTicket second = engine.startRun(ALICE, threadId, StartRun.of("second"));
        RunTicket third = engine.startRun(ALICE, threadId, StartRun.of("third"));

        awaitRun(engine, third.runId(), RunStatus.SUCCEEDED);
        awaitRun(engine, second.runId(), RunStatus.SUCCEEDED);
        assertThat(runtime.requests()).extracting(r -> r.userMessage()).containsExactly("first", "second", "third");
    }

    @Test
    void anInterruptingMessageDoesNotOvertakeAQueuedRegenerate() {
        AtomicInteger played = new AtomicInteger();
        ScriptedRuntime runtime = ScriptedRuntime.of(request -> played.incrementAndGet() == 2
                ? slowToStop() : Scripts.instant("answer"));
        ChatEngine engine = engine(runtime, b -> b.doubleTexting(DoubleTexting.INTERRUPT));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket asked = engine.startRun(ALICE, threadId, StartRun.of("question"));
        awaitRun(engine, asked.runId(), RunStatus.SUCCEEDED);

        RunTicket again = engine.regenerate(ALICE, asked.assistantMessageId());
        await(() -> runtime.isPlaying(again.runId()), playing -> playing, "the regenerate to play");
        RunTicket againQueued = engine.regenerate(ALICE, asked.assistantMessageId());
        RunTicket newMessage = engine.startRun(ALICE, threadId, StartRun.of("new question"));

        awaitRun(engine, newMessage.runId(), RunStatus.SUCCEEDED);
        awaitRun(engine, againQueued.runId(), RunStatus.SUCCEEDED);
        assertThat(runtime.requests()).extracting(r -> r.runId())
                .containsExactly(asked.runId(), again.runId(), againQueued.runId(), newMessage.runId());
    }

    /** Streams until cancelled, and takes 200 ms to stop, so that the runs sent meanwhile queue up. */
    private static ScriptedRuntime.Script slowToStop() {
        return (r, p) -> {
            try {
                p.text("working");
                p.awaitCancel();
            } finally {
                Thread.sleep(200);
            }
        };
    }

    /**
     * Found by the simulation: a start whose store write took effect although the call failed (the commit
     * happened, its answer was lost) left a RUNNING run that nothing would ever end, and the thread refused
     * every later message. The caller is told the start failed, and the stored run ends FAILED at once.
     */
    @Test
    void aStartStoredDespiteAFailedWriteEndsAndLeavesTheThreadFree() {
        java.util.concurrent.atomic.AtomicBoolean loseTheAnswer = new java.util.concurrent.atomic.AtomicBoolean(true);
        ChatStore real = store;
        store = InterceptedStore.losingTheAnswerOnce(real, loseTheAnswer,
                (method, args) -> method.equals("write") && !((StoreBatch) args[0]).runs().isEmpty());
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("ok")));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();

        assertCode(ErrorCode.STORE_FAILURE, () -> engine.startRun(ALICE, threadId, StartRun.of("hello")));
        List<Run> stored = real.findThreadRuns(threadId, EnumSet.allOf(RunStatus.class));
        assertThat(stored).hasSize(1);
        assertThat(stored.get(0).status()).isEqualTo(RunStatus.FAILED);
        assertThat(stored.get(0).error().code()).isEqualTo("STORE_FAILURE");
        RunTicket next = engine.startRun(ALICE, threadId, StartRun.of("hello again"));
        awaitRun(engine, next.runId(), RunStatus.SUCCEEDED);
    }

    /**
     * Found by the simulation: a thread whose delete took effect although the call failed (the commit
     * happened, its answer was lost) was gone, but the runtime was never told to forget its conversation
     * (files, remembered approvals), and no later delete could tell it: the thread was no longer there. The
     * store is read back; a thread gone after all counts as deleted, and the runtime forgets it.
     */
    @Test
    void aThreadDeletedDespiteAFailedCallIsForgottenByTheRuntime() {
        java.util.concurrent.atomic.AtomicBoolean loseTheAnswer = new java.util.concurrent.atomic.AtomicBoolean(true);
        ChatStore real = store;
        store = InterceptedStore.losingTheAnswerOnce(real, loseTheAnswer,
                (method, args) -> method.equals("deleteThread"));
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.instant("ok"));
        ChatEngine engine = engine(runtime);
        dev.parley.chat.model.ChatThread thread = engine.createThread(ALICE, NewThread.empty());

        engine.deleteThread(ALICE, thread.id());
        assertThat(loseTheAnswer).isFalse();
        assertThat(real.findThread(thread.id())).isEmpty();
        assertThat(runtime.deletedConversations())
                .containsExactly(dev.parley.chat.runtime.RunRequest.conversationKey(thread.id(), thread.createdAt()));
    }

    /**
     * A runtime that cannot forget a deleted thread's conversation at the moment (down for a while) is told
     * again shortly: its data does not stay because of one failed call.
     */
    @Test
    void aRuntimeThatCannotForgetADeletedThreadAtOnceIsToldAgain() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.instant("ok")).refusingThreadDeletes(2);
        ChatEngine engine = engine(runtime);
        dev.parley.chat.model.ChatThread thread = engine.createThread(ALICE, NewThread.empty());

        engine.deleteThread(ALICE, thread.id());
        assertThat(runtime.deletedConversations()).isEmpty();
        await(runtime::deletedConversations, keys -> !keys.isEmpty(), "the runtime to be told again");
        assertThat(runtime.deletedConversations())
                .containsExactly(dev.parley.chat.runtime.RunRequest.conversationKey(thread.id(), thread.createdAt()));
    }

    /**
     * Found by the simulation: an answer whose store call took effect although it failed stayed ANSWERED and
     * never reached the runtime; sending it again was REPLAYED without delivering it, and the run waited for
     * good. Now the store is read back, and an answer stored but not delivered while the run waits is
     * delivered.
     */
    @Test
    void anAnswerStoredDespiteAFailedCallStillReachesTheRuntime() {
        java.util.concurrent.atomic.AtomicBoolean loseTheAnswer = new java.util.concurrent.atomic.AtomicBoolean(true);
        ChatStore real = store;
        store = InterceptedStore.losingTheAnswerOnce(real, loseTheAnswer,
                (method, args) -> method.equals("answerInput"));
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Paris", "Rome")));
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("plan"));
        awaitRun(engine, ticket.runId(), RunStatus.WAITING_FOR_INPUT);

        assertThat(engine.answer(ALICE, ticket.runId(), "ask-1", List.of("Rome")))
                .isIn(AnswerResult.ACCEPTED, AnswerResult.REPLAYED);
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(runtime.answers()).hasSize(1);
        assertThat(engine.answer(ALICE, ticket.runId(), "ask-1", List.of("Rome"))).isEqualTo(AnswerResult.REPLAYED);
        assertThat(runtime.answers()).hasSize(1);
    }

    /**
     * Found by the simulation: the write that stored a run's end took effect although the call failed (its
     * answer was lost), and before the batch writer wrote that part again, a compaction took the run (its
     * stored record had ended) and cut its log down to four events. The retry then put the part's events back
     * between the compaction's note and the run's end: a log that said it was compacted and held the run's
     * last events, and not its first ones. A compacted log takes no events any more.
     */
    @Test
    void anEndStoredDespiteAFailedWriteIsNotWrittenBackIntoTheLogACompactionCutMeanwhile() throws Exception {
        ChatStore real = store;
        AtomicReference<StoreBatch> lostAnswer = new AtomicReference<>();
        CountDownLatch endStored = new CountDownLatch(1);
        CountDownLatch compacted = new CountDownLatch(1);
        CountDownLatch writtenAgain = new CountDownLatch(1);
        store = InterceptedStore.of(real, (method, args, proceed) -> {
            Object result = proceed.call();
            if (method.equals("write")) {
                StoreBatch batch = (StoreBatch) args[0];
                if (batch == lostAnswer.get()) {
                    writtenAgain.countDown();
                } else if (batch.runs().stream().anyMatch(run -> run.status().isTerminal())
                        && lostAnswer.compareAndSet(null, batch)) {
                    endStored.countDown();
                    compacted.await(10, TimeUnit.SECONDS);
                    throw new ChatException(ErrorCode.STORE_FAILURE, "injected: the commit's answer was lost");
                }
            }
            return result;
        });
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.manyDeltas(20)));
        RunTicket ticket = engine.startRun(ALICE, engine.createThread(ALICE, NewThread.empty()).id(),
                StartRun.of("long"));

        assertThat(endStored.await(10, TimeUnit.SECONDS)).as("the run's end stored").isTrue();
        Thread.sleep(5);
        assertThat(engine.compactEventLogs(Duration.ofMillis(1))).isEqualTo(1);
        List<RunEvent> compactedLog = eventsOf(real, ticket.runId());
        assertThat(compactedLog).hasSize(4);
        compacted.countDown();

        assertThat(writtenAgain.await(10, TimeUnit.SECONDS)).as("the part written again").isTrue();
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(eventsOf(real, ticket.runId())).containsExactlyElementsOf(compactedLog);
    }
}
