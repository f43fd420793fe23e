package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.testing.EventCollector;
import dev.parley.chat.testing.InterceptedStore;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/** What a new engine does with the runs a previous process left behind. */
class RecoveryTest extends EngineTestSupport {
    private static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");

    /** Writes what a process that died mid-run would have left: a run, its first messages, some events. */
    private Run leftBehind(String runId, RunStatus status, int storedEvents, long reservedSeq) {
        String threadId = "t-" + runId;
        store.createThread(new ChatThread(threadId, ALICE, "t", "sess-1", null, null, ThreadStatus.ACTIVE, T0, T0));
        UserMessage user = new UserMessage(runId + "-u", threadId, runId, null, MessageStatus.COMPLETED, T0, "hello");
        AssistantMessage answer = new AssistantMessage(runId + "-a", threadId, runId, user.id(), MessageStatus.IN_PROGRESS,
                T0, "", null, null);
        Run run = new Run(runId, threadId, ALICE, status, user.id(), answer.id(), "hello", null, null, null, Map.of(),
                T0, T0, null, null, null, null);
        StoreBatch.Builder batch = StoreBatch.builder().run(run).message(user).message(answer);
        List<AgentStreamEvent> events = List.of(
                new AgentStreamEvent.RunStarted(threadId, runId, answer.id()),
                new AgentStreamEvent.MessagesSnapshot(threadId, runId, List.of(user, answer), null),
                new AgentStreamEvent.TextDelta(answer.id(), "Partial"),
                new AgentStreamEvent.ClarifyRequested(runId + ":clarify:1", "ask-1", "Which city?", List.of("Paris", "Rome"),
                        false, "bridge-seq-17"));
        for (int i = 0; i < storedEvents; i++) {
            batch.event(new RunEvent(runId, i + 1, T0.toEpochMilli() + i, events.get(i)));
        }
        if (storedEvents >= 4) {
            batch.input(new PendingInput(runId, "ask-1", runId + ":clarify:1",
                    new ClarifyRequest("Which city?", List.of("Paris", "Rome"), false), null, "bridge-seq-17",
                    InputState.PENDING, null, T0, null));
        }
        store.write(batch.build());
        store.reserveSeq(runId, reservedSeq);
        return run;
    }

    /**
     * A run whose stream never said where it stands in the runtime (no resume point stored) cannot be
     * followed: it is stopped in the runtime first, so that the runtime does not finish a turn the thread
     * shows cut off, then it ends INTERRUPTED.
     */
    @Test
    void aRunningRunWithoutAResumePointIsStoppedInTheRuntimeAndInterruptedAboveEverySeqAClientMayHold() {
        Run run = leftBehind("r1", RunStatus.RUNNING, 3, 4096);
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.instant("next"));
        ChatEngine engine = engine(runtime);

        Run recovered = awaitRun(engine, run.id(), RunStatus.INTERRUPTED);
        assertThat(runtime.stoppedOrphans()).containsExactly("r1@null");
        assertThat(runtime.reattachments()).isEmpty();
        assertThat(recovered.error().code()).isEqualTo("INTERRUPTED");
        assertThat(store.findRun(run.id()).orElseThrow().status()).isEqualTo(RunStatus.INTERRUPTED);
        List<RunEvent> events = store.readEvents(run.id(), 0, 100);
        RunEvent end = events.get(events.size() - 1);
        assertThat(end.event()).isInstanceOf(AgentStreamEvent.RunFinished.class);
        assertThat(end.seq()).isEqualTo(4097);

        AssistantMessage answer = (AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow();
        assertThat(answer.text()).isEqualTo("Partial");
        assertThat(answer.status()).isEqualTo(MessageStatus.INTERRUPTED);

        EventCollector ahead = EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, run.id(), 3000)).awaitDone();
        assertThat(ahead.events()).containsExactly(end);
        EventCollector all = EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, run.id(), 0)).awaitDone();
        assertThat(all.events()).extracting(RunEvent::seq).containsExactly(1L, 2L, 3L, 4097L);
        assertThat(all.reduced().messages()).isEqualTo(storedMessagesOf(store.findRun(run.id()).orElseThrow()));

        RunTicket next = engine.startRun(ALICE, run.threadId(), StartRun.of("again"));
        awaitRun(engine, next.runId(), RunStatus.SUCCEEDED);
    }

    @Test
    void aStepWhoseEventsWereStoredButWhoseMessageWasNotIsStoredWhenTheRunIsRecovered() {
        Run run = leftBehind("r9", RunStatus.RUNNING, 3, 4096);
        store.write(StoreBatch.builder().event(new RunEvent(run.id(), 4, T0.toEpochMilli() + 4,
                new AgentStreamEvent.StatusUpdate("r9:status:4", "lifecycle", "Thinking"))).build());
        assertThat(store.findMessage("r9:status:4")).as("the process died before its message flush").isEmpty();

        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("next")));

        awaitRun(engine, run.id(), RunStatus.INTERRUPTED);
        EventCollector all = EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, run.id(), 0)).awaitDone();
        assertThat(storedMessagesOf(store.findRun(run.id()).orElseThrow())).isEqualTo(all.reduced().messages());
        assertThat(store.findMessage("r9:status:4")).isPresent();
    }

    @Test
    void aRunThatDiedBeforeItsFirstEventIsInterruptedToo() {
        Run run = leftBehind("r2", RunStatus.RUNNING, 0, 0);
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("x")));
        awaitRun(engine, run.id(), RunStatus.INTERRUPTED);
        EventCollector all = EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, run.id(), 0)).awaitDone();
        assertThat(all.events()).extracting(RunEvent::type)
                .containsExactly("run_started", "messages", "run_finished");
        assertThat(store.findMessage(run.assistantMessageId()).orElseThrow().status()).isEqualTo(MessageStatus.INTERRUPTED);
    }

    @Test
    void aRunWaitingForAnAnswerIsReattachedAndStillAnswerable() {
        Run run = leftBehind("r3", RunStatus.WAITING_FOR_INPUT, 4, 4096);
        ScriptedRuntime runtime = ScriptedRuntime.playing((request, p) -> {
            String choice = p.awaitAnswer("ask-1").answer().get(0);
            p.text(" — going to " + choice);
            p.finish();
        });
        ChatEngine engine = engine(runtime);
        await(runtime::reattachments, list -> !list.isEmpty(), "the re-attachment");
        assertThat(runtime.reattachments()).containsExactly("r3@bridge-seq-17");
        assertThat(runtime.requests().get(0).runtimeSessionId()).isEqualTo("sess-1");
        RunState state = engine.state(ALICE, run.id());
        assertThat(state.run().status()).isEqualTo(RunStatus.WAITING_FOR_INPUT);
        assertThat(state.pendingInputs()).extracting(PendingInput::inputId).containsExactly("ask-1");

        assertThat(engine.answer(ALICE, run.id(), "ask-1", List.of("Rome"))).isEqualTo(AnswerResult.ACCEPTED);
        awaitRun(engine, run.id(), RunStatus.SUCCEEDED);
        assertThat(((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text())
                .isEqualTo("Partial — going to Rome");
        List<RunEvent> events = store.readEvents(run.id(), 0, 100);
        assertThat(events.get(4).seq()).as("new events are numbered above the reservation").isEqualTo(4097);
    }

    /**
     * Found by the simulation: a run whose end was logged while its record's write was lost still said
     * RUNNING; followed again after a restart, it ended a second time. Its record is stored as ended, as its
     * log says, and the runtime is neither followed nor stopped again.
     */
    @Test
    void aRunWhoseEndIsLoggedButWhoseRecordSaysActiveIsSettledNotFollowedAgain() {
        Run run = leftBehind("r20", RunStatus.RUNNING, 3, 3);
        store.write(StoreBatch.builder()
                .event(new RunEvent(run.id(), 4, T0.toEpochMilli() + 4, new AgentStreamEvent.TextDelta(
                        run.assistantMessageId(), " and done")))
                .event(new RunEvent(run.id(), 5, T0.toEpochMilli() + 5,
                        new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null)))
                .resumePoint(new StoreBatch.ResumePoint(run.id(), "bridge-seq-9", 0, true))
                .build());
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.instant("next"));
        ChatEngine engine = engine(runtime, b -> b.outbox(type -> List.of("hook")));

        Run settled = await(() -> store.findRun(run.id()).orElseThrow(), r -> r.status().isTerminal(),
                "the record settled");
        assertThat(((dev.parley.chat.outbox.OutboxStore) store).claimOutbox("test", T0.plusSeconds(3600),
                T0.plusSeconds(7200), 10)).as("the end's notification goes with its record")
                .extracting(e -> e.type() + " " + e.runId())
                .containsExactly(dev.parley.chat.outbox.OutboxEventType.RUN_SUCCEEDED + " " + run.id());
        assertThat(settled.status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(settled.finishedAt()).isEqualTo(Instant.ofEpochMilli(T0.toEpochMilli() + 5));
        assertThat(store.readEvents(run.id(), 0, 100)).extracting(RunEvent::seq).containsExactly(1L, 2L, 3L, 4L, 5L);
        AssistantMessage answer = (AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow();
        assertThat(answer.text()).isEqualTo("Partial and done");
        assertThat(answer.status()).isEqualTo(MessageStatus.COMPLETED);
        assertThat(runtime.reattachments()).isEmpty();
        assertThat(runtime.stoppedOrphans()).isEmpty();
        assertThat(engine.state(ALICE, run.id()).run().status()).isEqualTo(RunStatus.SUCCEEDED);

        RunTicket next = engine.startRun(ALICE, run.threadId(), StartRun.of("again"));
        awaitRun(engine, next.runId(), RunStatus.SUCCEEDED);
    }

    /**
     * A listener (metrics, traces) hears that a run followed again after a restart starts working here, before
     * it ends: a run that only ended here was missing from the active runs and had no trace.
     */
    @Test
    void aListenerHearsARecoveredRunStartAndEnd() {
        Run waiting = leftBehind("r22", RunStatus.WAITING_FOR_INPUT, 4, 4096);
        Run cutOff = leftBehind("r23", RunStatus.RUNNING, 3, 3);
        List<String> heard = new java.util.concurrent.CopyOnWriteArrayList<>();
        ScriptedRuntime runtime = ScriptedRuntime.playing((request, p) -> {
            p.text(" — " + p.awaitAnswer("ask-1").answer().get(0));
            p.finish();
        });
        ChatEngine engine = engine(runtime, b -> b.listener(new EngineListener() {
            @Override
            public void runStarted(Run run) {
                heard.add("started " + run.id() + " " + run.status());
            }

            @Override
            public void runFinished(Run run) {
                heard.add("finished " + run.id() + " " + run.status());
            }
        }));

        awaitRun(engine, cutOff.id(), RunStatus.INTERRUPTED);
        await(runtime::reattachments, list -> !list.isEmpty(), "the re-attachment");
        engine.answer(ALICE, waiting.id(), "ask-1", List.of("Rome"));
        awaitRun(engine, waiting.id(), RunStatus.SUCCEEDED);
        await(() -> heard.size(), n -> n == 4, "both runs heard");
        assertThat(heard).containsSubsequence("started r22 WAITING_FOR_INPUT", "finished r22 SUCCEEDED")
                .containsSubsequence("started r23 RUNNING", "finished r23 INTERRUPTED");
    }

    /**
     * The context a run was started in is kept with it and handed to the propagator when the run is followed
     * again, so a trace can link the two; keeping it failing changes nothing for the run.
     */
    @Test
    void theContextARunWasStartedInIsKeptAndHandedBackWhenItIsFollowedAgain() {
        Map<String, String> headers = Map.of("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
        List<String> resumed = new java.util.concurrent.CopyOnWriteArrayList<>();
        RunContextPropagator propagator = new RunContextPropagator() {
            @Override
            public Captured capture(Run run) {
                return new Captured() {
                    @Override
                    public Scope open() {
                        return Scope.NOTHING;
                    }

                    @Override
                    public Map<String, String> headers() {
                        return headers;
                    }
                };
            }

            @Override
            public Captured resume(Run run, Map<String, String> startHeaders) {
                resumed.add(run.id() + " " + startHeaders);
                return Captured.NOTHING;
            }
        };
        AtomicBoolean keepingFails = new AtomicBoolean(true);
        ChatStore real = store;
        store = InterceptedStore.of(real, (method, args, proceed) -> {
            if (method.equals("saveStartContext") && keepingFails.getAndSet(false)) {
                throw new dev.parley.chat.ChatException(ErrorCode.STORE_FAILURE, "injected: keeping the context failed");
            }
            return proceed.call();
        });
        ChatEngine first = engine(ScriptedRuntime.playing(Scripts.instant("done")), b -> b.contextPropagator(propagator));
        String threadId = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket unkept = first.startRun(ALICE, threadId, StartRun.of("one"));
        assertThat(awaitRun(first, unkept.runId(), RunStatus.SUCCEEDED).status()).as("a failed keep fails nothing")
                .isEqualTo(RunStatus.SUCCEEDED);
        assertThat(real.findStartContext(unkept.runId())).isEmpty();
        RunTicket kept = first.startRun(ALICE, threadId, StartRun.of("two"));
        awaitRun(first, kept.runId(), RunStatus.SUCCEEDED);
        assertThat(real.findStartContext(kept.runId())).isEqualTo(headers);

        Run left = leftBehind("r24", RunStatus.RUNNING, 3, 3);
        real.saveStartContext(left.id(), headers);
        ChatEngine second = engine(ScriptedRuntime.playing(Scripts.instant("next")), b -> b.contextPropagator(propagator));
        awaitRun(second, left.id(), RunStatus.INTERRUPTED);
        assertThat(resumed).containsExactly("r24 " + headers);
    }

    /**
     * A run whose recovery failed is read again when it is retried, and a failing read puts the retry off
     * (it no longer goes on with the run as first found): one that ended meanwhile (here by hand, as another
     * path would end it) is not followed again.
     */
    @Test
    void aRetriedRecoveryReadsTheRunAgainAndLeavesOneThatEndedMeanwhile() {
        Run run = leftBehind("r21", RunStatus.RUNNING, 3, 3);
        store.write(StoreBatch.builder().resumePoint(new StoreBatch.ResumePoint(run.id(), "bridge-seq-9", 0, true))
                .build());
        AtomicBoolean recoveryFails = new AtomicBoolean(true);
        AtomicBoolean nextRunReadFails = new AtomicBoolean();
        java.util.concurrent.atomic.AtomicInteger readsAfterTheEnd = new java.util.concurrent.atomic.AtomicInteger();
        ChatStore real = store;
        store = InterceptedStore.of(real, (method, args, proceed) -> {
            if (method.equals("findRun") && run.id().equals(args[0]) && !recoveryFails.get()
                    && readsAfterTheEnd.incrementAndGet() == 1 && nextRunReadFails.getAndSet(false)) {
                throw new dev.parley.chat.ChatException(ErrorCode.STORE_FAILURE, "injected: the retry's read failed");
            }
            if (method.equals("lastSeq") && recoveryFails.getAndSet(false)) {
                nextRunReadFails.set(true);
                real.write(StoreBatch.builder()
                        .event(new RunEvent(run.id(), 4, T0.toEpochMilli() + 4,
                                new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "stopped elsewhere")))
                        .run(run.finished(RunStatus.CANCELLED, T0.plusSeconds(1), null, null, null))
                        .build());
                throw new dev.parley.chat.ChatException(ErrorCode.STORE_FAILURE, "injected: recovery's read failed");
            }
            return proceed.call();
        });
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.instant("next"));
        ChatEngine engine = engine(runtime);
        assertThat(recoveryFails).as("the first recovery failed").isFalse();

        await(() -> readsAfterTheEnd.get() >= 2 || !runtime.reattachments().isEmpty(), done -> done,
                "the retry after the failed read, or a re-attachment");
        assertThat(runtime.reattachments()).as("the ended run is not followed again").isEmpty();
        RunTicket next = engine.startRun(ALICE, run.threadId(), StartRun.of("again"));
        awaitRun(engine, next.runId(), RunStatus.SUCCEEDED);
        assertThat(real.readEvents(run.id(), 0, 100)).filteredOn(e -> e.event().isTerminal()).hasSize(1);
    }

    /**
     * An answer that comes while the run is not followed yet (its recovery failed and is retried shortly) can
     * reach nobody: it is refused as RUNTIME_UNAVAILABLE and taken back, not refused as if the run had stopped
     * waiting; sent again once the run is followed, it is delivered once.
     */
    @Test
    void anAnswerBeforeTheRecoveryOfItsRunIsRefusedForNowAndDeliveredWhenSentAgain() {
        Run run = leftBehind("r10", RunStatus.WAITING_FOR_INPUT, 4, 4096);
        AtomicBoolean recoveryFails = new AtomicBoolean(true);
        ChatStore real = store;
        store = InterceptedStore.of(real, (method, args, proceed) -> {
            if (method.equals("lastSeq") && recoveryFails.getAndSet(false)) {
                throw new dev.parley.chat.ChatException(ErrorCode.STORE_FAILURE, "injected: recovery's read failed");
            }
            return proceed.call();
        });
        ScriptedRuntime runtime = ScriptedRuntime.playing((request, p) -> {
            p.text(" — going to " + p.awaitAnswer("ask-1").answer().get(0));
            p.finish();
        });
        ChatEngine engine = engine(runtime);
        assertThat(recoveryFails).as("the first recovery failed").isFalse();

        assertCode(ErrorCode.RUNTIME_UNAVAILABLE, () -> engine.answer(ALICE, run.id(), "ask-1", List.of("Rome")));
        assertThat(real.findInput(run.id(), "ask-1").orElseThrow().state()).isEqualTo(InputState.PENDING);
        await(runtime::reattachments, list -> !list.isEmpty(), "the retried recovery");
        assertThat(engine.answer(ALICE, run.id(), "ask-1", List.of("Rome"))).isEqualTo(AnswerResult.ACCEPTED);
        awaitRun(engine, run.id(), RunStatus.SUCCEEDED);
        assertThat(runtime.answers()).hasSize(1);
    }

    /**
     * Found by the simulation: an answer whose store call took effect although it failed, while its run was
     * not followed yet after a restart, was reported REPLAYED though it reached nobody. It is refused as
     * RUNTIME_UNAVAILABLE; it stays stored (an earlier process may have delivered it, and an answer reaches the
     * runtime at most once), so the run, followed again, is not left waiting for it: it ends INTERRUPTED.
     */
    @Test
    void anAnswerStoredDespiteAFailedCallBeforeItsRunIsFollowedIsNotReportedAsTaken() {
        Run run = leftBehind("r11", RunStatus.WAITING_FOR_INPUT, 4, 4096);
        AtomicBoolean recoveryFails = new AtomicBoolean(true);
        AtomicBoolean loseTheAnswer = new AtomicBoolean(true);
        ChatStore real = store;
        store = InterceptedStore.of(InterceptedStore.losingTheAnswerOnce(real, loseTheAnswer,
                (method, args) -> method.equals("answerInput")), (method, args, proceed) -> {
                    if (method.equals("lastSeq") && recoveryFails.getAndSet(false)) {
                        throw new dev.parley.chat.ChatException(ErrorCode.STORE_FAILURE, "injected: recovery's read failed");
                    }
                    return proceed.call();
                });
        ScriptedRuntime runtime = ScriptedRuntime.playing((request, p) -> {
            p.text(" — going to " + p.awaitAnswer("ask-1").answer().get(0));
            p.finish();
        });
        ChatEngine engine = engine(runtime);

        assertCode(ErrorCode.RUNTIME_UNAVAILABLE, () -> engine.answer(ALICE, run.id(), "ask-1", List.of("Rome")));
        assertThat(loseTheAnswer).isFalse();
        awaitRun(engine, run.id(), RunStatus.INTERRUPTED);
        assertThat(runtime.answers()).isEmpty();
        assertThat(engine.state(ALICE, run.id()).pendingInputs()).isEmpty();
    }

    @Test
    void withoutReattachAWaitingRunIsInterruptedAndItsQuestionWithdrawn() {
        Run run = leftBehind("r4", RunStatus.WAITING_FOR_INPUT, 4, 10);
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.instant("x"))
                .withCapabilities(EnumSet.of(Capability.CLARIFY, Capability.CANCEL));
        ChatEngine engine = engine(runtime);
        awaitRun(engine, run.id(), RunStatus.INTERRUPTED);
        assertThat(runtime.stoppedOrphans()).as("the question must not keep waiting in the runtime")
                .containsExactly("r4@null");
        assertThat(store.findInput(run.id(), "ask-1").orElseThrow().state()).isEqualTo(InputState.CANCELLED);
        assertCode(ErrorCode.CONFLICT, () -> engine.answer(ALICE, run.id(), "ask-1", List.of("Rome")));
        Message clarify = store.findMessage(run.id() + ":clarify:1").orElseThrow();
        assertThat(clarify.status()).isEqualTo(MessageStatus.INTERRUPTED);
    }

    @Test
    void anApprovalTheEngineAskedDoesNotOutliveItsHostTheRunIsInterruptedAndTheApprovalWithdrawn() {
        HostAction refund = new HostAction(new dev.parley.chat.runtime.HostToolSpec("refund", "Refunds", "{}"),
                call -> "done", HostActionApproval.always(call -> "Refunds"));
        ChatEngine first = engine(ScriptedRuntime.playing(Scripts.callsHostAction("refund", "{}")), b -> b.hostAction(refund));
        String threadId = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = first.startRun(ALICE, threadId, StartRun.of("refund"));
        String inputId = await(() -> first.state(ALICE, ticket.runId()).pendingInputs(), pending -> !pending.isEmpty(),
                "the approval").get(0).inputId();
        first.close();

        ChatEngine second = engine(ScriptedRuntime.playing(Scripts.instant("next")), b -> b.hostAction(refund));
        awaitRun(second, ticket.runId(), RunStatus.INTERRUPTED);
        assertThat(store.findInput(ticket.runId(), inputId).orElseThrow().state()).isEqualTo(InputState.CANCELLED);
        assertCode(ErrorCode.CONFLICT, () -> second.answer(ALICE, ticket.runId(), inputId,
                dev.parley.chat.input.ApprovalAnswer.of(dev.parley.chat.input.ApprovalDecision.ALLOW_ONCE)));
        awaitRun(second, second.startRun(ALICE, threadId, StartRun.of("again")).runId(), RunStatus.SUCCEEDED);
    }

    @Test
    void aQueuedRunStartsAfterARestart() {
        Run run = leftBehind("r5", RunStatus.QUEUED, 0, 0);
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("finally")));
        awaitRun(engine, run.id(), RunStatus.SUCCEEDED);
        assertThat(((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text()).isEqualTo("finally");
    }

    /**
     * A queued run a closing engine leaves for the next one (its launch was handed to a worker just before the
     * close) never starts here too: two engines would play one run, and the second start found the runtime
     * had it already (the simulation found the run ended twice).
     */
    @Test
    void aQueuedRunWhoseLaunchWasUnderWayWhenTheEngineClosedStartsOnlyOnTheNextEngine() throws Exception {
        List<Runnable> held = new java.util.concurrent.CopyOnWriteArrayList<>();
        java.util.concurrent.atomic.AtomicBoolean holding = new java.util.concurrent.atomic.AtomicBoolean();
        java.util.concurrent.ExecutorService real = java.util.concurrent.Executors.newCachedThreadPool();
        java.util.concurrent.ExecutorService work = new java.util.concurrent.AbstractExecutorService() {
            @Override
            public void execute(Runnable task) {
                if (holding.get()) {
                    held.add(task);
                } else {
                    real.execute(task);
                }
            }

            @Override
            public void shutdown() {
                real.shutdown();
            }

            @Override
            public List<Runnable> shutdownNow() {
                return real.shutdownNow();
            }

            @Override
            public boolean isShutdown() {
                return real.isShutdown();
            }

            @Override
            public boolean isTerminated() {
                return real.isTerminated();
            }

            @Override
            public boolean awaitTermination(long timeout, java.util.concurrent.TimeUnit unit) throws InterruptedException {
                return real.awaitTermination(timeout, unit);
            }
        };
        Run queued = leftBehind("r-q", RunStatus.QUEUED, 0, 0);
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.instant("once"));
        holding.set(true);
        ChatEngine first = engine(runtime, b -> b.executor(work));
        await(() -> held.size(), size -> size > 0, "the recovered run's launch to be handed to a worker");

        first.close();
        held.forEach(Runnable::run);
        assertThat(runtime.requests()).as("the closed engine did not start it").isEmpty();
        assertThat(store.findRun(queued.id()).orElseThrow().status()).isEqualTo(RunStatus.QUEUED);

        ChatEngine next = engine(runtime);
        awaitRun(next, queued.id(), RunStatus.SUCCEEDED);
        assertThat(runtime.requests()).hasSize(1);
        assertThat(store.readEvents(queued.id(), 0, 100)).filteredOn(e -> e.event().isTerminal()).hasSize(1);
        real.shutdownNow();
    }

    /**
     * A working run whose stream never said where it stands cannot be left for the next engine: closing
     * stops it in the runtime (what the runtime then reports is not logged) and ends it INTERRUPTED. A run
     * waiting for an answer is left.
     */
    @Test
    void closingTheEngineStopsAndInterruptsRunsItCannotLeaveButLeavesReattachableWaitingOnes() {
        ScriptedRuntime runtime = ScriptedRuntime.of(request -> request.userMessage().equals("work")
                ? Scripts.streamsUntilCancelled() : Scripts.clarify("?", List.of("a")));
        ChatEngine engine = engine(runtime);
        String t1 = engine.createThread(ALICE, NewThread.empty()).id();
        String t2 = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket working = engine.startRun(ALICE, t1, StartRun.of("work"));
        RunTicket waiting = engine.startRun(ALICE, t2, StartRun.of("ask"));
        EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, working.runId(), 0)).awaitCount(4);
        awaitRun(engine, waiting.runId(), RunStatus.WAITING_FOR_INPUT);

        engine.close();
        assertThat(store.findRun(working.runId()).orElseThrow().status()).isEqualTo(RunStatus.INTERRUPTED);
        List<RunEvent> workingEvents = store.readEvents(working.runId(), 0, 100);
        assertThat(workingEvents.get(workingEvents.size() - 1).event()).isEqualTo(
                new AgentStreamEvent.RunFinished(RunStatus.INTERRUPTED, "the host shut down while the run was active"));
        assertThat(workingEvents).filteredOn(e -> e.event().isTerminal()).hasSize(1);
        assertThat(runtime.stoppedOrphans()).containsExactly(working.runId() + "@null");
        assertThat(store.findRun(waiting.runId()).orElseThrow().status()).isEqualTo(RunStatus.WAITING_FOR_INPUT);
        await(() -> runtime.isPlaying(waiting.runId()), playing -> !playing, "the runtime stream to be closed");
        long eventsAfterClose = store.lastSeq(waiting.runId());
        assertThat(store.readEvents(waiting.runId(), 0, 100)).extracting(RunEvent::type)
                .as("the stream's end after close is not logged").doesNotContain("run_failed", "run_finished");
        assertThat(store.lastSeq(waiting.runId())).isEqualTo(eventsAfterClose);
        assertThat(((AssistantMessage) store.findMessage(working.assistantMessageId()).orElseThrow()).text())
                .isEqualTo("Partial answer");
    }

    /**
     * Found by the simulation: an answer that reached a closing engine after it had left the waiting run to
     * the next one was delivered all the same, by an engine that no longer followed the run, and the run
     * ended twice (once there, once on the next engine). Leaving a run and delivering an answer to it now
     * exclude each other: the late answer is refused as RUNTIME_UNAVAILABLE and taken back, and the next
     * engine, which re-attaches, takes it once.
     */
    @Test
    void anAnswerThatReachesAClosingEngineAfterItLeftTheRunIsTakenBackForTheNextEngine() throws Exception {
        java.util.concurrent.CountDownLatch answerStored = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch engineClosed = new java.util.concurrent.CountDownLatch(1);
        ChatStore real = store;
        store = InterceptedStore.of(real, (method, args, proceed) -> {
            Object result = proceed.call();
            if (method.equals("answerInput") && answerStored.getCount() > 0) {
                answerStored.countDown();
                engineClosed.await();
            }
            return result;
        });
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Paris", "Rome")));
        ChatEngine first = engine(runtime);
        String threadId = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = first.startRun(ALICE, threadId, StartRun.of("plan a trip"));
        awaitRun(first, ticket.runId(), RunStatus.WAITING_FOR_INPUT);

        java.util.concurrent.CompletableFuture<AnswerResult> late = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> first.answer(ALICE, ticket.runId(), "ask-1", List.of("Rome")));
        answerStored.await();
        first.close();
        engineClosed.countDown();
        assertThat(late).failsWithin(java.time.Duration.ofSeconds(10))
                .withThrowableOfType(java.util.concurrent.ExecutionException.class)
                .havingCause().isInstanceOf(dev.parley.chat.ChatException.class)
                .satisfies(e -> assertThat(((dev.parley.chat.ChatException) e).code())
                        .isEqualTo(ErrorCode.RUNTIME_UNAVAILABLE));
        assertThat(runtime.answers()).as("the closing engine handed nothing to the runtime").isEmpty();
        assertThat(real.findInput(ticket.runId(), "ask-1").orElseThrow().state()).isEqualTo(InputState.PENDING);

        ChatEngine second = engine(runtime);
        await(runtime::reattachments, list -> !list.isEmpty(), "the re-attachment");
        assertThat(second.answer(ALICE, ticket.runId(), "ask-1", List.of("Rome"))).isEqualTo(AnswerResult.ACCEPTED);
        Run done = awaitRun(second, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(((AssistantMessage) real.findMessage(done.assistantMessageId()).orElseThrow()).text())
                .isEqualTo("You chose Rome.");
        assertThat(runtime.answers()).hasSize(1);
        assertThat(real.readEvents(ticket.runId(), 0, 100)).filteredOn(e -> e.event().isTerminal()).hasSize(1);
    }

    /**
     * A subscriber still open when its engine closes is told so (it would otherwise wait for good): here one
     * following a run that waits for an answer, which the closing engine leaves for the next one to re-attach.
     * It gets an error saying where to continue, and continues there after a restart.
     */
    @Test
    void aSubscriberOpenWhenTheEngineClosesIsToldAndContinuesOnTheNextEngine() {
        ChatEngine first = engine(ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Paris", "Rome"))));
        String threadId = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = first.startRun(ALICE, threadId, StartRun.of("plan"));
        awaitRun(first, ticket.runId(), RunStatus.WAITING_FOR_INPUT);
        EventCollector following = EventCollector.unbounded().subscribeTo(first.subscribe(ALICE, ticket.runId(), 0));
        following.awaitCount(3);

        first.close();
        following.awaitDone();
        assertThat(following.completed()).isFalse();
        assertThat(following.error()).isInstanceOfSatisfying(dev.parley.chat.ChatException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.RUNTIME_UNAVAILABLE));
        long cursor = following.events().get(following.events().size() - 1).seq();

        ChatEngine next = engine(ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Paris", "Rome"))));
        EventCollector continued = EventCollector.unbounded().subscribeTo(next.subscribe(ALICE, ticket.runId(), cursor));
        next.cancel(ALICE, ticket.runId());
        continued.awaitDone();
        assertThat(continued.completed()).isTrue();
        assertThat(continued.events()).first().satisfies(e -> assertThat(e.seq()).isGreaterThan(cursor));
    }

    /**
     * Found by the simulation: when the first look for the runs a last process left failed, the look tried
     * again two seconds later took the runs this engine had started meanwhile for left-overs — it ended them
     * INTERRUPTED and ran a second copy of each. A retried look now leaves this engine's own runs alone.
     */
    @Test
    void aRetriedRecoveryLeavesTheRunsThisEngineStartedAlone() {
        java.util.concurrent.atomic.AtomicBoolean firstLook = new java.util.concurrent.atomic.AtomicBoolean(true);
        dev.parley.chat.store.ChatStore real = store;
        store = dev.parley.chat.testing.InterceptedStore.of(real, (method, args, proceed) -> {
            if (method.equals("findRuns") && firstLook.getAndSet(false)) {
                throw new dev.parley.chat.ChatException(ErrorCode.STORE_FAILURE, "injected: the first look fails");
            }
            return proceed.call();
        });
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.slow(30, 100)));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("take your time"));

        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(firstLook).as("the first look failed").isFalse();
        List<RunEvent> events = real.readEvents(run.id(), 0, 1_000);
        assertThat(events).filteredOn(e -> e.event().isTerminal()).hasSize(1);
        assertThat(events.get(events.size() - 1).event())
                .isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
    }
}
