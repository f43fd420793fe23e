package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.testing.EventCollector;
import dev.parley.chat.testing.FailingStore;
import dev.parley.chat.testing.InProcessCoordinators;
import dev.parley.chat.testing.InterceptedStore;
import dev.parley.chat.testing.RunFollower;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import dev.parley.chat.store.ChatStore;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Two engines ("instances") on one store, connected by coordinators: a run started on one is streamed,
 * cancelled and answered through the other, and a dead instance's runs are taken over after its lease.
 */
class ClusterTest extends EngineTestSupport {
    private final InProcessCoordinators hub = new InProcessCoordinators();
    private final List<ChatEngine> engines = new ArrayList<>();

    @AfterEach
    void closeHub() {
        engines.forEach(ChatEngine::close);
        hub.close();
    }

    private ChatEngine instance(String id, ScriptedRuntime runtime, dev.parley.chat.store.ChatStore store) {
        return instance(id, runtime, store, EngineLimits.defaults());
    }

    private ChatEngine instance(String id, ScriptedRuntime runtime, dev.parley.chat.store.ChatStore store,
            EngineLimits limits) {
        return instance(id, runtime, store, limits, DoubleTexting.REJECT);
    }

    private ChatEngine instance(String id, ScriptedRuntime runtime, dev.parley.chat.store.ChatStore store,
            EngineLimits limits, DoubleTexting doubleTexting) {
        ChatEngine engine = ChatEngine.builder().runtime(runtime).store(store)
                .coordinator(hub.join(id))
                .leaseTimeout(Duration.ofMillis(900))
                .controlTimeout(Duration.ofSeconds(2))
                .limits(limits.withCancelGracePeriod(Duration.ofMillis(500)))
                .doubleTexting(doubleTexting)
                .build();
        engines.add(engine);
        return engine;
    }

    private static Run awaitRunVia(ChatEngine engine, String runId, RunStatus status) {
        return await(() -> engine.state(ALICE, runId).run(), run -> run.status() == status, runId + " " + status);
    }

    @Test
    void aRunStartedOnOneInstanceStreamsFromTheOtherThroughReconnects() {
        ChatEngine a = instance("a", ScriptedRuntime.playing(Scripts.slow(120, 3)), store);
        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.instant("unused")), store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("go"));

        List<RunEvent> received = RunFollower.follow(List.of(a, b), ALICE, ticket.runId(), new Random(7), 40);
        Run run = awaitRunVia(b, ticket.runId(), RunStatus.SUCCEEDED);
        dev.parley.chat.reduce.RunReducer reducer = new dev.parley.chat.reduce.RunReducer();
        received.forEach(reducer::apply);
        assertThat(reducer.messages()).isEqualTo(storedMessagesOf(run));

        EventCollector fromB = EventCollector.unbounded().subscribeTo(b.subscribe(ALICE, ticket.runId(), 0)).awaitDone();
        assertThat(fromB.events()).isEqualTo(received);
    }

    /**
     * A run's end is committed between a subscriber's two reads (events after its cursor: none yet; the
     * run: finished). The subscriber must read again, not end without the events committed with the end.
     */
    @Test
    void aSubscriberThatSeesTheRunEndAfterAnEmptyReadReadsTheEventsCommittedWithIt() {
        ChatEngine a = instance("a", ScriptedRuntime.playing(Scripts.instant("Done.")), store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("go"));
        awaitRunVia(a, ticket.runId(), RunStatus.SUCCEEDED);
        AtomicBoolean endNotYetCommitted = new AtomicBoolean(true);
        ChatStore raced = InterceptedStore.of(store, (method, args, proceed) ->
                method.equals("readEvents") && endNotYetCommitted.getAndSet(false) ? List.of() : proceed.call());
        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.instant("unused")), raced);

        EventCollector onB = EventCollector.unbounded().subscribeTo(b.subscribe(ALICE, ticket.runId(), 0)).awaitDone();

        assertThat(endNotYetCommitted).isFalse();
        assertThat(onB.events()).isNotEmpty()
                .isEqualTo(EventCollector.unbounded().subscribeTo(a.subscribe(ALICE, ticket.runId(), 0))
                        .awaitDone().events());
        assertThat(onB.events().get(onB.events().size() - 1).event().isTerminal()).isTrue();
    }

    @Test
    void aLiveRunOnOneInstanceIsFollowedLiveFromTheOther() {
        ChatEngine a = instance("a", ScriptedRuntime.playing(Scripts.slow(60, 10)), store);
        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.instant("unused")), store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("go"));
        EventCollector onB = EventCollector.unbounded().subscribeTo(b.subscribe(ALICE, ticket.runId(), 0));
        hub.disconnect("b");
        onB.awaitCount(10);
        hub.reconnect("b");
        onB.awaitDone();
        assertThat(onB.completed()).isTrue();
        assertThat(onB.reduced().messages()).isEqualTo(storedMessagesOf(store.findRun(ticket.runId()).orElseThrow()));
    }

    @Test
    void aCancelOnTheOtherInstanceStopsTheRun() {
        ScriptedRuntime runtimeA = ScriptedRuntime.playing(Scripts.streamsUntilCancelled());
        ChatEngine a = instance("a", runtimeA, store);
        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.instant("unused")), store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("go"));
        EventCollector.unbounded().subscribeTo(a.subscribe(ALICE, ticket.runId(), 0)).awaitCount(4);

        b.cancel(ALICE, ticket.runId());
        Run run = awaitRunVia(b, ticket.runId(), RunStatus.CANCELLED);
        assertThat(runtimeA.cancels()).containsExactly(ticket.runId());
        assertThat(((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text())
                .isEqualTo("Partial answer");
    }

    @Test
    void anApprovalTheEngineAskedIsDecidedThroughTheOtherInstance() {
        java.util.List<String> refunded = new java.util.concurrent.CopyOnWriteArrayList<>();
        HostAction refund = new HostAction(new dev.parley.chat.runtime.HostToolSpec("refund", "Refunds", "{}"), call -> {
            refunded.add(call.arguments());
            return "done";
        }, HostActionApproval.always(call -> "Refunds order 9").withEditableArguments());
        ScriptedRuntime runtimeA = ScriptedRuntime.playing(Scripts.callsHostAction("refund", "{\"order\":9}"));
        ChatEngine a = ChatEngine.builder().runtime(runtimeA).store(store).coordinator(hub.join("a"))
                .leaseTimeout(Duration.ofMillis(900)).controlTimeout(Duration.ofSeconds(2)).hostAction(refund).build();
        engines.add(a);
        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.instant("unused")), store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("refund"));
        dev.parley.chat.input.PendingInput asked = await(() -> b.state(ALICE, ticket.runId()).pendingInputs(),
                pending -> !pending.isEmpty(), "the approval seen from b").get(0);

        dev.parley.chat.input.ApprovalAnswer allow = new dev.parley.chat.input.ApprovalAnswer(
                dev.parley.chat.input.ApprovalDecision.ALLOW_ONCE, "{\"order\":10}");
        assertThat(b.answer(ALICE, ticket.runId(), asked.inputId(), allow)).isEqualTo(AnswerResult.ACCEPTED);
        awaitRunVia(b, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(refunded).containsExactly("{\"order\":10}");
        assertThat(b.answer(ALICE, ticket.runId(), asked.inputId(), allow)).isEqualTo(AnswerResult.REPLAYED);
    }

    @Test
    void aClarifyIsAnsweredThroughTheOtherInstance() {
        ScriptedRuntime runtimeA = ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Paris", "Rome")));
        ChatEngine a = instance("a", runtimeA, store);
        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.instant("unused")), store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("plan"));
        awaitRunVia(b, ticket.runId(), RunStatus.WAITING_FOR_INPUT);
        assertThat(b.state(ALICE, ticket.runId()).pendingInputs()).hasSize(1);

        assertThat(b.answer(ALICE, ticket.runId(), "ask-1", List.of("Rome"))).isEqualTo(AnswerResult.ACCEPTED);
        Run run = awaitRunVia(b, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(b.answer(ALICE, ticket.runId(), "ask-1", List.of("Rome"))).isEqualTo(AnswerResult.REPLAYED);
        assertCode(ErrorCode.CONFLICT, () -> a.answer(ALICE, ticket.runId(), "ask-1", List.of("Paris")));
        assertThat(runtimeA.answers()).hasSize(1);
        assertThat(((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text())
                .isEqualTo("You chose Rome.");
    }

    @Test
    void anAnswerNoInstanceTakesIsTakenBack() {
        ScriptedRuntime runtimeA = ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Paris", "Rome")));
        ChatEngine a = instance("a", runtimeA, store);
        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.instant("unused")), store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("plan"));
        awaitRunVia(b, ticket.runId(), RunStatus.WAITING_FOR_INPUT);
        hub.disconnect("a");
        assertCode(ErrorCode.RUNTIME_UNAVAILABLE, () -> b.answer(ALICE, ticket.runId(), "ask-1", List.of("Rome")));
        assertThat(store.findInput(ticket.runId(), "ask-1").orElseThrow().state())
                .isEqualTo(dev.parley.chat.input.InputState.PENDING);
        hub.reconnect("a");
        assertThat(b.answer(ALICE, ticket.runId(), "ask-1", List.of("Paris"))).isEqualTo(AnswerResult.ACCEPTED);
        awaitRunVia(b, ticket.runId(), RunStatus.SUCCEEDED);
    }

    /**
     * Follows a streaming run from {@code follower}, then kills its holder (its store fails, it leaves the
     * hub); returns what the follower saw once the run ended there, taken over.
     */
    private EventCollector followWhileTheHolderDies(ChatEngine follower, RunTicket ticket, FailingStore storeOfHolder,
            String holder) {
        EventCollector seen = EventCollector.unbounded().subscribeTo(follower.subscribe(ALICE, ticket.runId(), 0))
                .awaitCount(4);
        storeOfHolder.kill();
        hub.disconnect(holder);
        return seen.awaitDone();
    }

    /**
     * The dead instance's run never said where it stands in the runtime: the instance that takes it over
     * cannot follow it, stops it in the runtime and ends it INTERRUPTED.
     */
    @Test
    void aDeadInstancesRunsAreInterruptedAfterTheLeaseAndItsSubscribersSeeTheEnd() {
        FailingStore storeOfA = new FailingStore(store);
        ChatEngine a = instance("a", ScriptedRuntime.playing(Scripts.streamsUntilCancelled()), storeOfA.store());
        ScriptedRuntime runtimeOfB = ScriptedRuntime.playing(Scripts.instant("unused"));
        ChatEngine b = instance("b", runtimeOfB, store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("go"));
        EventCollector onB = followWhileTheHolderDies(b, ticket, storeOfA, "a");
        RunEvent end = onB.events().get(onB.events().size() - 1);
        assertThat(end.event()).isEqualTo(new dev.parley.chat.event.AgentStreamEvent.RunFinished(RunStatus.INTERRUPTED,
                "the host stopped while the run was active"));
        assertThat(store.findRun(ticket.runId()).orElseThrow().status()).isEqualTo(RunStatus.INTERRUPTED);
        assertThat(store.findLease(ticket.runId()).orElseThrow().instanceId()).isEqualTo("b");
        assertThat(runtimeOfB.stoppedOrphans()).containsExactly(ticket.runId() + "@null");
        assertThat(((AssistantMessage) store.findMessage(ticket.assistantMessageId()).orElseThrow()).text())
                .isEqualTo("Partial answer");
        RunTicket next = b.startRun(ALICE, thread, StartRun.of("again"));
        awaitRunVia(b, next.runId(), RunStatus.SUCCEEDED);
    }

    /**
     * A dead instance's streaming run, in a runtime that carries it on (one runtime serves both instances, as
     * one Bridge would): the instance that takes it over after the lease re-attaches from the stored point,
     * and a subscriber on it follows the run to its real end, every frame in the log once.
     */
    @Test
    void aDeadInstancesStreamingRunIsTakenOverAndFollowedToItsEnd() {
        ScriptedRuntime bridge = ScriptedRuntime.playing(Scripts.frames(80, 10));
        FailingStore storeOfA = new FailingStore(store);
        ChatEngine a = instance("a", bridge, storeOfA.store());
        ChatEngine b = instance("b", bridge, store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("go"));
        EventCollector onB = followWhileTheHolderDies(b, ticket, storeOfA, "a");

        assertThat(onB.completed()).isTrue();
        assertThat(store.findRun(ticket.runId()).orElseThrow().status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(store.findLease(ticket.runId()).orElseThrow().instanceId()).isEqualTo("b");
        assertThat(bridge.reattachments()).hasSize(1);
        assertThat(bridge.stoppedOrphans()).isEmpty();
        List<RunEvent> log = store.readEvents(ticket.runId(), 0, 10_000);
        StringBuilder streamed = new StringBuilder();
        log.stream().filter(e -> e.event() instanceof dev.parley.chat.event.AgentStreamEvent.TextDelta)
                .forEach(e -> streamed.append(((dev.parley.chat.event.AgentStreamEvent.TextDelta) e.event()).delta()));
        assertThat(streamed.toString()).isEqualTo(Scripts.framedAnswer(80));
        assertThat(log).filteredOn(e -> e.event().isTerminal()).hasSize(1);
        assertThat(onB.events()).isEqualTo(log);
        assertThat(onB.reduced().messages()).isEqualTo(storedMessagesOf(store.findRun(ticket.runId()).orElseThrow()));
    }

    /**
     * An instance whose lease lapsed unnoticed (its renewal stalled) closes after another instance took its run
     * over. The run is no longer the closing instance's: it must neither stop it in the runtime (had the other
     * instance re-attached to it, that stop would end the run it follows) nor end it.
     */
    @Test
    void aClosingInstanceLeavesAloneARunAnotherInstanceTookOver() throws Exception {
        ScriptedRuntime.Script quietAfterTheFirstWord = (request, p) -> {
            p.text("first ");
            p.sleep(10_000);
            p.finish();
        };
        ScriptedRuntime runtimeOfA = ScriptedRuntime.playing(quietAfterTheFirstWord);
        ScriptedRuntime runtimeOfB = ScriptedRuntime.playing(quietAfterTheFirstWord);
        Thread closer = Thread.currentThread();
        java.util.concurrent.CountDownLatch closed = new java.util.concurrent.CountDownLatch(1);
        AtomicBoolean renewalStalls = new AtomicBoolean();
        ChatStore storeOfA = InterceptedStore.of(store, (method, args, proceed) -> {
            if (method.equals("leaseRuns") && renewalStalls.get()) {
                if (Thread.currentThread() == closer) {
                    closed.countDown(); // the close reads the leases itself: the stalled renewal may go on now
                } else {
                    closed.await(10, java.util.concurrent.TimeUnit.SECONDS);
                }
            }
            return proceed.call();
        });
        ChatEngine a = instance("a", runtimeOfA, storeOfA);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("go"));
        await(() -> store.readEvents(ticket.runId(), 0, 100).size(), n -> n >= 3, "the first words stored");
        Thread.sleep(500);
        renewalStalls.set(true);
        ChatEngine b = instance("b", runtimeOfB, store);
        await(() -> store.findRun(ticket.runId()).orElseThrow().status(), s -> s == RunStatus.INTERRUPTED,
                "b to take the run over and stop it");
        assertThat(runtimeOfB.stoppedOrphans()).containsExactly(ticket.runId() + "@null");

        a.close();

        assertThat(runtimeOfA.stoppedOrphans()).as("only the instance that holds the run stops it").isEmpty();
        assertThat(store.findLease(ticket.runId()).orElseThrow().instanceId()).isEqualTo("b");
        assertThat(store.readEvents(ticket.runId(), 0, 10_000)).filteredOn(e -> e.event().isTerminal()).hasSize(1);
        RunTicket next = b.startRun(ALICE, thread, StartRun.of("again"));
        assertThat(next.runId()).isNotEqualTo(ticket.runId());
    }

    /**
     * A run the closing instance stopped, but whose end it could not store (the store refuses writes while the
     * host closes), stays active in the store: its lease is released with the close, so that another instance
     * takes it over at once rather than after a whole lease timeout.
     */
    @Test
    void aRunWhoseEndCouldNotBeStoredAtCloseHasItsLeaseReleased() {
        FailingStore storeOfA = new FailingStore(store);
        ChatEngine a = instance("a", ScriptedRuntime.playing(Scripts.streamsUntilCancelled()), storeOfA.store());
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("go"));
        awaitRunVia(a, ticket.runId(), RunStatus.RUNNING);
        await(() -> store.findLease(ticket.runId()).isPresent(), held -> held, "a to hold the lease");

        storeOfA.fail("write");
        a.close();

        assertThat(store.findRun(ticket.runId()).orElseThrow().status()).as("its end was not stored")
                .isEqualTo(RunStatus.RUNNING);
        assertThat(store.findLease(ticket.runId()).orElseThrow().until()).as("released")
                .isBefore(java.time.Instant.now());
    }

    /** Where the closing instance cannot read the leases, its runs stay its own: stopped and ended as before. */
    @Test
    void aClosingInstanceThatCannotReadTheLeasesStopsItsRunsAsBefore() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.streamsUntilCancelled());
        Thread closer = Thread.currentThread();
        AtomicBoolean closing = new AtomicBoolean();
        ChatStore storeOfA = InterceptedStore.of(store, (method, args, proceed) -> {
            if (method.equals("leaseRuns") && closing.get() && Thread.currentThread() == closer) {
                throw new dev.parley.chat.ChatException(ErrorCode.STORE_FAILURE, "the store is unreachable");
            }
            return proceed.call();
        });
        ChatEngine a = instance("a", runtime, storeOfA);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("go"));
        awaitRunVia(a, ticket.runId(), RunStatus.RUNNING);

        closing.set(true);
        a.close();

        assertThat(runtime.stoppedOrphans()).containsExactly(ticket.runId() + "@null");
        assertThat(store.findRun(ticket.runId()).orElseThrow().status()).isEqualTo(RunStatus.INTERRUPTED);
    }

    /**
     * A subscriber on the instance that takes a run over follows it from the store, so it sees the run's
     * end as soon as the end is committed, a moment before the taking instance frees the thread (here
     * widened: closing the run's pending inputs comes in between and is slow). A person who saw the end and
     * sends the next message at once must get a run, not a conflict.
     */
    @Test
    void theNextMessageRightAfterATakenOverRunEndsStartsARun() {
        FailingStore storeOfA = new FailingStore(store);
        ChatEngine a = instance("a", ScriptedRuntime.playing(Scripts.streamsUntilCancelled()), storeOfA.store());
        ChatStore slowToCloseInputs = InterceptedStore.of(store, (method, args, proceed) -> {
            if (method.equals("cancelPendingInputs")) {
                Thread.sleep(400);
            }
            return proceed.call();
        });
        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.instant("Again.")), slowToCloseInputs);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("go"));
        EventCollector onB = followWhileTheHolderDies(b, ticket, storeOfA, "a");
        RunTicket next = b.startRun(ALICE, thread, StartRun.of("again"));

        assertThat(next.status()).isEqualTo(RunStatus.RUNNING);
        awaitRunVia(b, next.runId(), RunStatus.SUCCEEDED);
    }

    /**
     * The common cluster case: the run on one instance, the person's browser on the other. The end it sees
     * there is read from the store, where the run's record ends in the same transaction, so the next
     * message, sent to the other instance at once, starts a run.
     */
    @Test
    void theNextMessageRightAfterARunEndsElsewhereStartsARun() {
        ChatEngine a = instance("a", ScriptedRuntime.playing(Scripts.slow(20, 5)), store);
        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.instant("Again.")), store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("go"));

        EventCollector.unbounded().subscribeTo(b.subscribe(ALICE, ticket.runId(), 0)).awaitDone();
        RunTicket next = b.startRun(ALICE, thread, StartRun.of("again"));

        assertThat(next.status()).isEqualTo(RunStatus.RUNNING);
        awaitRunVia(b, next.runId(), RunStatus.SUCCEEDED);
    }

    @Test
    void anInstanceThatLostItsLeaseLetsTheRunGoWithoutOverwritingIt() {
        FailingStore storeOfA = new FailingStore(store);
        ChatEngine a = instance("a", ScriptedRuntime.playing(Scripts.slow(400, 10)), storeOfA.store());
        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.instant("unused")), store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("go"));
        EventCollector.unbounded().subscribeTo(a.subscribe(ALICE, ticket.runId(), 0)).awaitCount(5);

        storeOfA.fail("leaseRuns");
        await(() -> store.findRun(ticket.runId()).orElseThrow().status(), s -> s == RunStatus.INTERRUPTED,
                "b to take the run over");
        storeOfA.heal("leaseRuns");
        await(() -> a.state(ALICE, ticket.runId()).run().status(), s -> s == RunStatus.INTERRUPTED,
                "a to let the run go");
        long lastSeq = store.lastSeq(ticket.runId());
        try {
            Thread.sleep(300);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        assertThat(store.lastSeq(ticket.runId())).as("a stored nothing after the take-over").isEqualTo(lastSeq);
        assertThat(store.findRun(ticket.runId()).orElseThrow().status()).isEqualTo(RunStatus.INTERRUPTED);
        assertThat(store.findMessage(ticket.assistantMessageId()).orElseThrow().status())
                .isEqualTo(dev.parley.chat.model.MessageStatus.INTERRUPTED);
    }

    /**
     * Review defect 9: an instance cut off from the store keeps the run's unstored events while its lease
     * lapses and another instance takes the run over. Once the store answers again, those events must not
     * be written after the take-over (the writes are fenced), and dropping them must release the stream
     * back-pressure they held, or every later run on the instance blocks.
     */
    @Test
    void aRunTakenOverDuringAnOutageIsDroppedWithoutLateWritesOrLeakedBackPressure() {
        FailingStore storeOfA = new FailingStore(store);
        ScriptedRuntime runtimeOfA = ScriptedRuntime.of(request -> request.userMessage().equals("long")
                ? Scripts.slow(2_000, 1) : Scripts.manyDeltas(300));
        ChatEngine a = instance("a", runtimeOfA, storeOfA.store(), EngineLimits.defaults().withMaxPendingEvents(50));
        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.instant("unused")), store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("long"));
        EventCollector.unbounded().subscribeTo(a.subscribe(ALICE, ticket.runId(), 0)).awaitCount(10);

        storeOfA.fail("write");
        storeOfA.fail("leaseRuns");
        await(() -> store.findRun(ticket.runId()).orElseThrow().status(), s -> s == RunStatus.INTERRUPTED,
                "b to take the run over");
        int storedAtTakeOver = store.readEvents(ticket.runId(), 0, 100_000).size();
        storeOfA.heal("write");
        storeOfA.heal("leaseRuns");
        await(() -> a.state(ALICE, ticket.runId()).run().status(), s -> s == RunStatus.INTERRUPTED,
                "a to let the run go");
        try {
            Thread.sleep(500);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        assertThat(store.readEvents(ticket.runId(), 0, 100_000)).as("a wrote nothing of the run after the take-over")
                .hasSize(storedAtTakeOver);

        String other = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket next = a.startRun(ALICE, other, StartRun.of("many"));
        awaitRunVia(a, next.runId(), RunStatus.SUCCEEDED);
    }

    /**
     * Review defect 10: the busy check and the insert are separate transactions, so two instances (a double
     * click behind a round-robin balancer) could both start a run on one thread. Both pass the check here
     * at the same moment; the store's one-active-run rule lets exactly one in.
     */
    @Test
    void twoInstancesStartingARunOnOneThreadAtOnceStartExactlyOne() throws Exception {
        java.util.concurrent.CyclicBarrier bothChecked = new java.util.concurrent.CyclicBarrier(2);
        java.util.concurrent.atomic.AtomicInteger checks = new java.util.concurrent.atomic.AtomicInteger();
        ChatStore checkingTogether = InterceptedStore.of(store, (method, args, proceed) -> {
            Object result = proceed.call();
            if (method.equals("findThreadRuns") && checks.incrementAndGet() <= 2) {
                bothChecked.await(5, java.util.concurrent.TimeUnit.SECONDS);
            }
            return result;
        });
        ChatEngine a = instance("a", ScriptedRuntime.playing(Scripts.streamsUntilCancelled()), checkingTogether);
        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.streamsUntilCancelled()), checkingTogether);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        List<ChatEngine> both = List.of(a, b);

        List<Object> outcomes = dev.parley.chat.testing.Await.race(2, i -> {
            try {
                return both.get(i).startRun(ALICE, thread, StartRun.of("click " + i));
            } catch (dev.parley.chat.ChatException e) {
                return e.code();
            }
        });
        assertThat(outcomes).filteredOn(RunTicket.class::isInstance).hasSize(1);
        assertThat(outcomes).filteredOn(ErrorCode.CONFLICT::equals).hasSize(1);
        assertThat(store.findThreadRuns(thread, java.util.EnumSet.allOf(RunStatus.class))).hasSize(1);
    }

    /**
     * Review defect 6: a store error while taking a dead instance's run over must not leave the run in
     * memory without an end (and its lease renewed for good). The seq reservation the take-over makes
     * before logging the end fails here: the end is logged regardless, and the run ends INTERRUPTED.
     */
    @Test
    void aStoreErrorWhileTakingARunOverStillEndsTheRun() {
        FailingStore storeOfA = new FailingStore(store);
        ChatEngine a = instance("a", ScriptedRuntime.playing(Scripts.streamsUntilCancelled()), storeOfA.store());
        java.util.concurrent.atomic.AtomicInteger failedReservations = new java.util.concurrent.atomic.AtomicInteger();
        ChatStore failingOnce = InterceptedStore.of(store, (method, args, proceed) -> {
            if (method.equals("reserveSeq") && failedReservations.getAndIncrement() == 0) {
                throw new dev.parley.chat.ChatException(ErrorCode.STORE_FAILURE, "injected: reserving seqs");
            }
            return proceed.call();
        });
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("go"));
        EventCollector.unbounded().subscribeTo(a.subscribe(ALICE, ticket.runId(), 0)).awaitCount(4);
        storeOfA.kill();
        hub.disconnect("a");

        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.instant("next")), failingOnce);
        await(() -> store.findRun(ticket.runId()).orElseThrow().status(), s -> s == RunStatus.INTERRUPTED,
                "b to take the run over");
        awaitRunVia(b, ticket.runId(), RunStatus.INTERRUPTED);
        assertThat(failedReservations.get()).as("the take-over's reservation failed").isPositive();
        RunTicket next = b.startRun(ALICE, thread, StartRun.of("again"));
        awaitRunVia(b, next.runId(), RunStatus.SUCCEEDED);
    }

    /**
     * A cancel has one path whichever instance receives it: a queued run cancelled through another instance
     * leaves its thread's queue, so when the run ahead of it ends the thread is free for the next message
     * (it used to become the thread's current run, ended, and wedge the thread for good).
     */
    @Test
    void aQueuedRunCancelledThroughAnotherInstanceLeavesTheQueue() {
        ScriptedRuntime runtimeA = ScriptedRuntime.of(request -> request.userMessage().equals("first")
                ? Scripts.streamsUntilCancelled() : Scripts.instant("Done."));
        ChatEngine a = instance("a", runtimeA, store, EngineLimits.defaults(), DoubleTexting.ENQUEUE);
        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.instant("unused")), store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = a.startRun(ALICE, thread, StartRun.of("first"));
        RunTicket queued = a.startRun(ALICE, thread, StartRun.of("queued"));
        assertThat(queued.status()).isEqualTo(RunStatus.QUEUED);

        b.cancel(ALICE, queued.runId());
        awaitRunVia(a, queued.runId(), RunStatus.CANCELLED);
        a.cancel(ALICE, first.runId());
        awaitRunVia(a, first.runId(), RunStatus.CANCELLED);

        RunTicket next = a.startRun(ALICE, thread, StartRun.of("next"));
        assertThat(next.status()).isEqualTo(RunStatus.RUNNING);
        awaitRunVia(a, next.runId(), RunStatus.SUCCEEDED);
        assertThat(runtimeA.requests()).extracting(dev.parley.chat.runtime.RunRequest::userMessage)
                .containsExactly("first", "next");
    }

    /**
     * An instance that lets go of a queued run (another instance holds its lease now: here, its renewals
     * say so and the run is never taken back) drops it from the thread's queue: it must not launch the run
     * later while the other instance runs it too.
     */
    @Test
    void aQueuedRunWhoseLeaseIsLostIsNeverLaunchedHere() {
        java.util.Set<String> lostLeases = java.util.concurrent.ConcurrentHashMap.newKeySet();
        ChatStore losingLeases = InterceptedStore.of(store, (method, args, proceed) -> {
            if (method.equals("takeOverRun") && lostLeases.contains((String) args[0])) {
                return false;
            }
            Object result = proceed.call();
            if (method.equals("leaseRuns")) {
                @SuppressWarnings("unchecked")
                java.util.Set<String> held = new java.util.HashSet<>((java.util.Set<String>) result);
                held.removeAll(lostLeases);
                return held;
            }
            return result;
        });
        ScriptedRuntime runtimeA = ScriptedRuntime.of(request -> request.userMessage().equals("first")
                ? Scripts.slow(1_500, 1) : Scripts.instant("Done."));
        ChatEngine a = instance("a", runtimeA, losingLeases, EngineLimits.defaults(), DoubleTexting.ENQUEUE);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = a.startRun(ALICE, thread, StartRun.of("first"));
        RunTicket queued = a.startRun(ALICE, thread, StartRun.of("queued"));
        lostLeases.add(queued.runId());
        awaitRunVia(a, first.runId(), RunStatus.SUCCEEDED);
        try {
            Thread.sleep(500);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        assertThat(runtimeA.requests()).extracting(dev.parley.chat.runtime.RunRequest::userMessage)
                .as("the run it let go is not launched here").containsExactly("first");
    }

    /**
     * Found by the long simulation: a start whose write took effect although the call failed (its answer was
     * lost) is ended FAILED by its instance, but while the store could not yet say whether the run was stored,
     * the run was nobody's: its lease was not renewed, the other instance took it over as a queued run and
     * ran it, and the run ended twice. The instance holds the run (renewing its lease) until it has ended it.
     */
    @Test
    void aStartStoredDespiteAFailedWriteIsNotTakenOverWhileItsInstanceEndsIt() throws Exception {
        AtomicBoolean loseTheAnswer = new AtomicBoolean();
        FailingStore storeOfA = new FailingStore(InterceptedStore.losingTheAnswerOnce(store, loseTheAnswer,
                (method, args) -> method.equals("write") && ((dev.parley.chat.store.StoreBatch) args[0]).runs().stream()
                        .anyMatch(run -> run.status() == RunStatus.QUEUED)));
        ChatEngine a = instance("a", ScriptedRuntime.playing(Scripts.streamsUntilCancelled()), storeOfA.store(),
                EngineLimits.defaults(), DoubleTexting.ENQUEUE);
        ScriptedRuntime runtimeB = ScriptedRuntime.playing(Scripts.instant("ran on b"));
        instance("b", runtimeB, store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = a.startRun(ALICE, thread, StartRun.of("first"));
        awaitRunVia(a, first.runId(), RunStatus.RUNNING);

        loseTheAnswer.set(true);
        storeOfA.fail("findRun");
        assertCode(ErrorCode.STORE_FAILURE, () -> a.startRun(ALICE, thread, StartRun.of("second")));
        Run second = store.findThreadRuns(thread, java.util.EnumSet.allOf(RunStatus.class)).stream()
                .filter(run -> !run.id().equals(first.runId())).findFirst().orElseThrow();
        Thread.sleep(2_000);
        storeOfA.heal("findRun");

        await(() -> store.findRun(second.id()).orElseThrow().status(), RunStatus::isTerminal, "the stored start to end");
        Thread.sleep(500);
        assertThat(runtimeB.requests()).as("the other instance never ran it").isEmpty();
        assertThat(store.findRun(second.id()).orElseThrow().status()).isEqualTo(RunStatus.FAILED);
        assertThat(store.readEvents(second.id(), 0, 1_000)).filteredOn(e -> e.event().isTerminal()).hasSize(1);
        assertThat(store.findRun(first.runId()).orElseThrow().status()).as("the first run goes on")
                .isEqualTo(RunStatus.RUNNING);
    }

    /**
     * An answer reaches the runtime at most once, whatever the timing across instances: here the holder
     * delivers it after the asking instance gave up waiting and took it back, and the person sends it again.
     * The holder refuses an input it already delivered, and its late success marks the input answered again.
     */
    @Test
    void anAnswerDeliveredLateIsNotDeliveredAgainByARetry() {
        ScriptedRuntime slowToTakeAnswers = ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Paris", "Rome")))
                .withAnswerDelay(Duration.ofMillis(2_600));
        ChatEngine a = instance("a", slowToTakeAnswers, store);
        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.instant("unused")), store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("plan"));
        awaitRunVia(b, ticket.runId(), RunStatus.WAITING_FOR_INPUT);

        assertCode(ErrorCode.RUNTIME_UNAVAILABLE, () -> b.answer(ALICE, ticket.runId(), "ask-1", List.of("Rome")));
        Object retried;
        try {
            retried = b.answer(ALICE, ticket.runId(), "ask-1", List.of("Rome"));
        } catch (dev.parley.chat.ChatException e) {
            retried = e.code();
        }
        awaitRunVia(b, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(slowToTakeAnswers.answers()).as("the runtime got the answer once").hasSize(1);
        assertThat(retried).isIn(AnswerResult.REPLAYED, ErrorCode.CONFLICT);
        assertThat(store.findInput(ticket.runId(), "ask-1").orElseThrow().state())
                .isEqualTo(dev.parley.chat.input.InputState.ANSWERED);
    }

    /** An engine closed on a scheduler it shares with its host leaves no task of its own behind there. */
    @Test
    void anEngineClosedOnASharedSchedulerLeavesNoTaskBehind() {
        java.util.concurrent.ScheduledThreadPoolExecutor shared = new java.util.concurrent.ScheduledThreadPoolExecutor(1);
        shared.setRemoveOnCancelPolicy(true);
        try {
            ChatEngine a = ChatEngine.builder().runtime(ScriptedRuntime.playing(Scripts.instant("hi"))).store(store)
                    .coordinator(hub.join("a")).scheduler(shared).eventRetention(Duration.ofDays(1)).build();
            assertThat(shared.getQueue()).as("lease renewal, take-overs, compaction").isNotEmpty();
            a.close();
            assertThat(shared.getQueue()).isEmpty();
            assertThat(shared.isShutdown()).as("the host's scheduler goes on").isFalse();
        } finally {
            shared.shutdownNow();
        }
    }

    /**
     * Deletion is final across instances too: a run another instance starts on a thread while it is being
     * deleted (that instance does not know) writes nothing after the delete — the store refuses rows of a
     * thread that is gone — and leaves that instance's memory.
     */
    @Test
    void aRunAnotherInstanceStartsDuringADeleteLeavesNoRow() {
        java.util.concurrent.atomic.AtomicReference<ChatEngine> other = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicReference<RunTicket> started = new java.util.concurrent.atomic.AtomicReference<>();
        ChatStore deletingSlowly = InterceptedStore.of(store, (method, args, proceed) -> {
            if (method.equals("deleteThread") && started.get() == null) {
                started.set(other.get().startRun(ALICE, (String) args[0], StartRun.of("late")));
                Thread.sleep(200);
            }
            return proceed.call();
        });
        ChatEngine a = instance("a", ScriptedRuntime.playing(Scripts.instant("unused")), deletingSlowly);
        other.set(instance("b", ScriptedRuntime.playing(Scripts.slow(60, 20)), store));
        String thread = a.createThread(ALICE, NewThread.empty()).id();

        a.deleteThread(ALICE, thread);
        RunTicket late = started.get();
        assertThat(late).as("b started a run while a was deleting").isNotNull();
        await(() -> {
            try {
                other.get().state(ALICE, late.runId());
                return false;
            } catch (dev.parley.chat.ChatException e) {
                return e.code() == ErrorCode.NOT_FOUND;
            }
        }, gone -> gone, "b to drop the run of the deleted thread");
        try {
            Thread.sleep(300);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        assertThat(store.findThread(thread)).isEmpty();
        assertThat(store.findRun(late.runId())).as("the late run's row").isEmpty();
        assertThat(store.readEvents(late.runId(), 0, 1_000)).as("its events").isEmpty();
        assertThat(store.findMessages(List.of(late.userMessageId(), late.assistantMessageId()))).isEmpty();
    }

    /**
     * Found by the simulation: a dying instance (its store gone) ended its run and showed that end to its
     * subscriber, though it was never stored; the instance that took the run over stored another end, and the
     * subscriber, having seen an end, never looked again. An end is shown only once stored: the subscriber is
     * told the engine closed instead, and finds the stored end on the other instance.
     */
    @Test
    void anEndTheStoreNeverTookIsNotShown() {
        FailingStore storeOfA = new FailingStore(store);
        ChatEngine a = instance("a", ScriptedRuntime.playing(Scripts.streamsUntilCancelled()), storeOfA.store());
        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.instant("unused")), store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("go"));
        EventCollector onA = EventCollector.unbounded().subscribeTo(a.subscribe(ALICE, ticket.runId(), 0)).awaitCount(4);

        storeOfA.kill();
        hub.disconnect("a");
        a.close();
        onA.awaitDone();
        assertThat(onA.events()).noneMatch(e -> e.event().isTerminal());
        assertThat(onA.error()).isInstanceOf(dev.parley.chat.ChatException.class);

        long cursor = onA.events().get(onA.events().size() - 1).seq();
        EventCollector onB = EventCollector.unbounded().subscribeTo(b.subscribe(ALICE, ticket.runId(), cursor)).awaitDone();
        assertThat(onB.completed()).isTrue();
        List<RunEvent> stored = store.readEvents(ticket.runId(), cursor, 1_000);
        assertThat(onB.events()).isEqualTo(stored);
        assertThat(stored.get(stored.size() - 1).event().isTerminal()).isTrue();
    }

    /**
     * Found by the simulation: a subscriber on an instance that lost a run's lease (and let the run go, staying
     * up) read on from the abandoned run's memory and either waited for good or saw that instance's own end,
     * never stored. It now follows the run from the store, and sees the end the new holder stored.
     */
    @Test
    void aSubscriberOnAnInstanceThatLetTheRunGoFollowsTheNewHolder() {
        FailingStore storeOfA = new FailingStore(store);
        ChatEngine a = instance("a", ScriptedRuntime.playing(Scripts.slow(400, 10)), storeOfA.store());
        instance("b", ScriptedRuntime.playing(Scripts.instant("unused")), store);
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("go"));
        EventCollector onA = EventCollector.unbounded().subscribeTo(a.subscribe(ALICE, ticket.runId(), 0)).awaitCount(5);

        storeOfA.fail("leaseRuns");
        onA.awaitDone();
        storeOfA.heal("leaseRuns");
        assertThat(onA.completed()).isTrue();
        List<RunEvent> stored = store.readEvents(ticket.runId(), 0, 100_000);
        assertThat(stored.get(stored.size() - 1).event())
                .isEqualTo(new dev.parley.chat.event.AgentStreamEvent.RunFinished(RunStatus.INTERRUPTED,
                        "the host stopped while the run was active"));
        assertThat(onA.events().get(onA.events().size() - 1)).isEqualTo(stored.get(stored.size() - 1));
        java.util.Set<Long> storedSeqs = new java.util.HashSet<>(stored.stream().map(RunEvent::seq).toList());
        assertThat(onA.events()).filteredOn(e -> e.event().isTerminal()).hasSize(1);
        assertThat(onA.events()).filteredOn(e -> storedSeqs.contains(e.seq()))
                .allSatisfy(e -> assertThat(stored).contains(e));
    }

    /**
     * Found by the simulation: a closed engine's coordinator listener threw (its workers refuse work) when a
     * control message arrived, and a coordinator that delivers to its listeners in turn then skipped the other
     * instances — the one holding the run never heard the cancel. A closed engine drops such messages quietly.
     */
    @Test
    void aClosedEnginesListenerDoesNotThrowIntoTheCoordinator() {
        java.util.concurrent.atomic.AtomicReference<dev.parley.chat.cluster.RunCoordinator.Listener> heard =
                new java.util.concurrent.atomic.AtomicReference<>();
        dev.parley.chat.cluster.RunCoordinator joined = hub.join("a");
        dev.parley.chat.cluster.RunCoordinator capturing = new dev.parley.chat.cluster.RunCoordinator() {
            @Override
            public String instanceId() {
                return joined.instanceId();
            }

            @Override
            public void start(Listener listener) {
                heard.set(listener);
                joined.start(listener);
            }

            @Override
            public void progressed(java.util.Map<String, Long> lastSeqByRun) {
                joined.progressed(lastSeqByRun);
            }

            @Override
            public void send(dev.parley.chat.cluster.ControlMessage message) {
                joined.send(message);
            }

            @Override
            public boolean clustered() {
                return true;
            }
        };
        ChatEngine a = ChatEngine.builder().runtime(ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Rome"))))
                .store(store).coordinator(capturing).leaseTimeout(Duration.ofMillis(900)).build();
        String thread = a.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = a.startRun(ALICE, thread, StartRun.of("plan"));
        awaitRunVia(a, ticket.runId(), RunStatus.WAITING_FOR_INPUT);
        a.close();

        dev.parley.chat.cluster.ControlMessage cancel = new dev.parley.chat.cluster.ControlMessage(
                dev.parley.chat.cluster.ControlMessage.Kind.CANCEL, ticket.runId(), "c-1", "b", null, null);
        org.assertj.core.api.Assertions.assertThatCode(() -> heard.get().onControl(cancel)).doesNotThrowAnyException();
    }

    /**
     * Found by the simulation: a message sent through one instance read the thread's branch, another instance
     * sent a message and finished its run before the first one stored its own, and the first message landed
     * beside the other (the same parent): one dropped off the branch. The write expects the branch it read;
     * when the branch moved, the start reads it again.
     */
    @Test
    void aMessageSentWhileAnotherInstanceMovesTheBranchFollowsIt() {
        java.util.concurrent.atomic.AtomicReference<ChatEngine> other = new java.util.concurrent.atomic.AtomicReference<>();
        java.util.concurrent.atomic.AtomicReference<RunTicket> meanwhile = new java.util.concurrent.atomic.AtomicReference<>();
        ChatStore racing = InterceptedStore.of(store, (method, args, proceed) -> {
            if (method.equals("write") && !((dev.parley.chat.store.StoreBatch) args[0]).runs().isEmpty()
                    && ((dev.parley.chat.store.StoreBatch) args[0]).runs().get(0).input().equals("second")
                    && meanwhile.get() == null) {
                String threadId = ((dev.parley.chat.store.StoreBatch) args[0]).runs().get(0).threadId();
                meanwhile.set(other.get().startRun(ALICE, threadId, StartRun.of("first")));
                awaitRunVia(other.get(), meanwhile.get().runId(), RunStatus.SUCCEEDED);
            }
            return proceed.call();
        });
        ChatEngine b = instance("b", ScriptedRuntime.playing(Scripts.instant("ok")), racing);
        other.set(instance("a", ScriptedRuntime.playing(Scripts.instant("ok")), store));
        String thread = b.createThread(ALICE, NewThread.empty()).id();

        RunTicket second = b.startRun(ALICE, thread, StartRun.of("second"));
        awaitRunVia(b, second.runId(), RunStatus.SUCCEEDED);

        assertThat(meanwhile.get()).as("a sent its message while b was storing").isNotNull();
        assertThat(store.findMessage(second.userMessageId()).orElseThrow().parentMessageId())
                .as("b's message follows a's answer").isEqualTo(meanwhile.get().assistantMessageId());
        assertThat(b.getThread(ALICE, thread).messages()).filteredOn(m -> m.kind().isTopLevel()).hasSize(4);
    }
}
