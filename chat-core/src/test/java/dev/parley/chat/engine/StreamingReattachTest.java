package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.testing.EventCollector;
import dev.parley.chat.testing.FailingStore;
import dev.parley.chat.testing.InterceptedStore;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * A run that was streaming when its host stopped is followed again by the next engine, from where its
 * stored events reach in the runtime's stream (its resume point), when the runtime can re-attach; where it
 * cannot, the run is stopped in the runtime before it ends INTERRUPTED. The runtime here is one
 * {@link ScriptedRuntime} shared by the engines that come and go, as a Bridge outlives its hosts, playing
 * {@link Scripts#frames}: frame i is the delta {@code "w<i> "} (every third one also a status update), with a
 * resume point after each.
 */
class StreamingReattachTest extends EngineTestSupport {
    private static final Instant T0 = Instant.parse("2026-11-29T10:00:00Z");

    /**
     * What a process that died while {@link Scripts#frames} streamed leaves: the run, its first messages,
     * these events from seq 1 (after run_started and the snapshot), the seq reservation, and the resume point.
     */
    private Run leftStreaming(String runId, List<AgentStreamEvent> streamed, StoreBatch.ResumePoint point) {
        String threadId = "t-" + runId;
        store.createThread(new ChatThread(threadId, ALICE, "t", "sess-1", null, null, ThreadStatus.ACTIVE, T0, T0));
        UserMessage user = new UserMessage(runId + "-u", threadId, runId, null, MessageStatus.COMPLETED, T0, "go");
        AssistantMessage answer = new AssistantMessage(runId + "-a", threadId, runId, user.id(), MessageStatus.IN_PROGRESS,
                T0, "", null, null);
        Run run = new Run(runId, threadId, ALICE, RunStatus.RUNNING, user.id(), answer.id(), "go", null, null, null,
                Map.of(), T0, T0, null, null, null, null);
        List<AgentStreamEvent> events = new ArrayList<>();
        events.add(new AgentStreamEvent.RunStarted(threadId, runId, answer.id()));
        events.add(new AgentStreamEvent.MessagesSnapshot(threadId, runId, List.of(user, answer), null));
        events.addAll(streamed);
        StoreBatch.Builder batch = StoreBatch.builder().run(run).message(user).message(answer).resumePoint(point);
        for (int i = 0; i < events.size(); i++) {
            batch.event(new RunEvent(runId, i + 1, T0.toEpochMilli() + i, events.get(i)));
        }
        store.write(batch.build());
        store.reserveSeq(runId, 4096);
        return run;
    }

    private static AgentStreamEvent word(String runId, int i) {
        return new AgentStreamEvent.TextDelta(runId + "-a", "w" + i + " ");
    }

    private static AgentStreamEvent step(String runId, int i) {
        return new AgentStreamEvent.StatusUpdate(runId + ":status:" + i, "info", "step " + i);
    }

    /** The text deltas of a log, in order: each frame's word exactly once, none missing, is the whole answer. */
    private static String streamedText(List<RunEvent> log) {
        StringBuilder text = new StringBuilder();
        for (RunEvent event : log) {
            if (event.event() instanceof AgentStreamEvent.TextDelta delta) {
                text.append(delta.delta());
            }
        }
        return text.toString();
    }

    private static List<String> steps(List<RunEvent> log) {
        return log.stream().filter(e -> e.event() instanceof AgentStreamEvent.StatusUpdate)
                .map(e -> ((AgentStreamEvent.StatusUpdate) e.event()).text()).toList();
    }

    /**
     * The process died in the middle of frame 6: its word is stored, its status update is not, and the stored
     * point says so (after frame 5, one item stored). The next engine re-attaches after frame 5, skips the
     * word it holds, logs the status update and goes on — above the seq reservation, with no gap in what the
     * runtime sent and nothing twice.
     */
    @Test
    void aStreamingRunContinuesFromTheItemAfterTheLastOneStoredWithoutAGapOrARepeat() {
        String r = "s1";
        Run run = leftStreaming(r, List.of(word(r, 1), word(r, 2), word(r, 3), step(r, 3), word(r, 4), word(r, 5),
                word(r, 6)), new StoreBatch.ResumePoint(r, "5", 1));
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.frames(8, 0));
        ChatEngine engine = engine(runtime);

        awaitRun(engine, run.id(), RunStatus.SUCCEEDED);
        assertThat(runtime.reattachments()).containsExactly("s1@5");
        assertThat(runtime.stoppedOrphans()).isEmpty();
        List<RunEvent> log = store.readEvents(run.id(), 0, 1_000);
        assertThat(streamedText(log)).isEqualTo(Scripts.framedAnswer(8));
        assertThat(steps(log)).containsExactly("step 3", "step 6");
        assertThat(log.get(9).seq()).as("new events are numbered above the reservation").isEqualTo(4097);
        assertThat(log.get(9).event()).as("the first item the store did not hold").isEqualTo(step(r, 6));
        assertThat(log).filteredOn(e -> e.event().isTerminal()).hasSize(1);
        assertThat(((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text())
                .isEqualTo(Scripts.framedAnswer(8));
        EventCollector all = EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, run.id(), 0)).awaitDone();
        assertThat(all.events()).isEqualTo(log);
        assertThat(all.reduced().messages()).isEqualTo(storedMessagesOf(store.findRun(run.id()).orElseThrow()));
        assertThat(store.findResumePoint(run.id())).as("the point follows the re-attached stream: after frame 8, "
                + "the whole answer and the end").contains(new StoreBatch.ResumePoint(r, "8", 2));
    }

    /** A runtime that no longer knows the run (a Bridge's 404) ends it INTERRUPTED, as before re-attaching existed. */
    @Test
    void aRunTheRuntimeNoLongerKnowsEndsInterrupted() {
        String r = "s2";
        Run run = leftStreaming(r, List.of(word(r, 1), word(r, 2)), new StoreBatch.ResumePoint(r, "2", 0));
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.frames(8, 0));
        runtime.forget(r);
        ChatEngine engine = engine(runtime);

        Run ended = awaitRun(engine, run.id(), RunStatus.INTERRUPTED);
        assertThat(ended.error().code()).isEqualTo("INTERRUPTED");
        assertThat(runtime.reattachments()).containsExactly("s2@2");
        List<RunEvent> log = store.readEvents(run.id(), 0, 1_000);
        assertThat(streamedText(log)).isEqualTo("w1 w2 ");
        assertThat(((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text())
                .isEqualTo("w1 w2 ");
        awaitRun(engine, engine.startRun(ALICE, run.threadId(), StartRun.of("again")).runId(), RunStatus.SUCCEEDED);
    }

    /**
     * A runtime that cannot re-attach (Hermes' API server) is told to stop the run it still carries, with the
     * token its stream reported (which names the run there), before the run ends INTERRUPTED: otherwise it
     * finishes the turn, and the next turn's history holds an answer the thread shows cut off.
     */
    @Test
    void withoutReattachTheRunIsStoppedInTheRuntimeWithItsTokenBeforeItEndsInterrupted() {
        String r = "s3";
        Run run = leftStreaming(r, List.of(word(r, 1)), new StoreBatch.ResumePoint(r, "hermes-run-7", 0));
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.frames(8, 0))
                .withCapabilities(EnumSet.of(Capability.CANCEL, Capability.APPROVALS));
        ChatEngine engine = engine(runtime);

        awaitRun(engine, run.id(), RunStatus.INTERRUPTED);
        assertThat(runtime.stoppedOrphans()).containsExactly("s3@hermes-run-7");
        assertThat(runtime.reattachments()).isEmpty();
        List<RunEvent> log = store.readEvents(run.id(), 0, 1_000);
        assertThat(log.get(log.size() - 1).event()).isEqualTo(
                new AgentStreamEvent.RunFinished(RunStatus.INTERRUPTED, "the host stopped while the run was active"));
    }

    /**
     * A host action was running when the host died: its result would never reach the runtime, which would
     * wait for it for good. Such a run is not re-attached; it is stopped in the runtime and INTERRUPTED.
     */
    @Test
    void aRunWhoseHostActionWasRunningIsStoppedAndInterruptedNotReattached() {
        String r = "s4";
        Run run = leftStreaming(r, List.of(word(r, 1), new AgentStreamEvent.ToolCallStart(r + ":tool:h1", "h1",
                "refund", "{}"), new AgentStreamEvent.ToolCallEnd("h1")), new StoreBatch.ResumePoint(r, "2", 0));
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.frames(8, 0));
        HostAction refund = new HostAction(new HostToolSpec("refund", "Refunds", "{}"), call -> "done",
                HostActionApproval.never());
        ChatEngine engine = engine(runtime, b -> b.hostAction(refund));

        awaitRun(engine, run.id(), RunStatus.INTERRUPTED);
        assertThat(runtime.reattachments()).isEmpty();
        assertThat(runtime.stoppedOrphans()).containsExactly("s4@2");
    }

    /**
     * A closing engine leaves a streaming run whose stream said where it stands for the next engine (it does
     * not stop it in the runtime, which carries on meanwhile), and stores its resume point with its last
     * events. The next engine follows it to its end: the log holds every frame once, a subscriber told that
     * the first engine closed continues on the next one from its cursor, and folds into the stored messages.
     */
    @Test
    void aClosingEngineLeavesAStreamingRunForTheNextEngineWhichFollowsItToItsEnd() {
        ScriptedRuntime bridge = ScriptedRuntime.playing(Scripts.frames(30, 15));
        ChatEngine first = engine(bridge);
        String threadId = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = first.startRun(ALICE, threadId, StartRun.of("stream"));
        EventCollector following = EventCollector.unbounded().subscribeTo(first.subscribe(ALICE, ticket.runId(), 0))
                .awaitCount(10);

        first.close();
        following.awaitDone();
        assertThat(following.completed()).as("told the engine closed").isFalse();
        assertThat(store.findRun(ticket.runId()).orElseThrow().status()).isEqualTo(RunStatus.RUNNING);
        assertThat(store.findResumePoint(ticket.runId())).isPresent();
        assertThat(bridge.stoppedOrphans()).isEmpty();
        assertThat(bridge.cancels()).isEmpty();
        long cursor = following.events().get(following.events().size() - 1).seq();

        ChatEngine next = engine(bridge);
        EventCollector continued = EventCollector.unbounded().subscribeTo(next.subscribe(ALICE, ticket.runId(), cursor));
        Run run = awaitRun(next, ticket.runId(), RunStatus.SUCCEEDED);
        continued.awaitDone();
        assertThat(bridge.reattachments()).hasSize(1);
        List<RunEvent> log = store.readEvents(run.id(), 0, 10_000);
        assertThat(streamedText(log)).isEqualTo(Scripts.framedAnswer(30));
        assertThat(steps(log)).hasSize(10).doesNotHaveDuplicates();
        assertThat(log).filteredOn(e -> e.event().isTerminal()).hasSize(1);
        List<RunEvent> seen = new ArrayList<>(following.events());
        seen.addAll(continued.events());
        assertThat(seen).isEqualTo(log);
        EventCollector all = EventCollector.unbounded().subscribeTo(next.subscribe(ALICE, run.id(), 0)).awaitDone();
        assertThat(all.reduced().messages()).isEqualTo(storedMessagesOf(run));
    }

    /**
     * The host dies mid-stream (its store cut off: nothing more of it is stored, at whatever point of a frame
     * that falls). The next engine re-attaches from the stored point and the run ends as the runtime ends it,
     * with every frame in the log once.
     */
    @Test
    void aRunWhoseHostDiedMidStreamIsFollowedToItsEndByTheNextEngine() {
        ScriptedRuntime bridge = ScriptedRuntime.playing(Scripts.frames(60, 5));
        FailingStore storeOfFirst = new FailingStore(store);
        dev.parley.chat.store.ChatStore shared = store;
        store = storeOfFirst.store();
        ChatEngine first = engine(bridge);
        store = shared;
        String threadId = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = first.startRun(ALICE, threadId, StartRun.of("stream"));
        await(() -> store.lastSeq(ticket.runId()), last -> last >= 20, "some frames to be stored");
        storeOfFirst.kill();

        ChatEngine next = engine(bridge);
        Run run = awaitRun(next, ticket.runId(), RunStatus.SUCCEEDED);
        List<RunEvent> log = store.readEvents(run.id(), 0, 10_000);
        assertThat(streamedText(log)).isEqualTo(Scripts.framedAnswer(60));
        assertThat(steps(log)).hasSize(20).doesNotHaveDuplicates();
        assertThat(log).filteredOn(e -> e.event().isTerminal()).hasSize(1);
        assertThat(bridge.reattachments()).hasSize(1);
        assertThat(((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text())
                .isEqualTo(Scripts.framedAnswer(60));
    }

    /**
     * A runtime that no longer knows the run ends it at once, also where the stored point says items after it
     * are stored: that end is the run's end, not an item to skip (skipping it left the stream ending without
     * a final event, and the run FAILED for a reason that was not its own).
     */
    @Test
    void aRunTheRuntimeNoLongerKnowsEndsInterruptedAlsoWhenItsPointSkipsItems() {
        String r = "s5";
        Run run = leftStreaming(r, List.of(word(r, 1), word(r, 2), word(r, 3)), new StoreBatch.ResumePoint(r, "2", 1));
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.frames(8, 0));
        runtime.forget(r);
        ChatEngine engine = engine(runtime);

        Run ended = awaitRun(engine, run.id(), RunStatus.INTERRUPTED);
        assertThat(ended.error().code()).isEqualTo("INTERRUPTED");
        assertThat(streamedText(store.readEvents(run.id(), 0, 1_000))).isEqualTo("w1 w2 w3 ");
    }

    /**
     * Tools the person's browser runs live only in the engine that started the run: a re-attached run that
     * called one would wait for a result nobody sends. Such a run is not left for the next engine when its
     * engine closes, nor followed after its host died: it is stopped in the runtime and INTERRUPTED.
     */
    @Test
    void aRunThatOffersBrowserToolsIsStoppedNotLeftWhenItsEngineCloses() {
        ScriptedRuntime bridge = ScriptedRuntime.playing(Scripts.frames(30, 15));
        ChatEngine first = engine(bridge);
        String threadId = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = first.startRun(ALICE, threadId, StartRun.of("stream")
                .withClientTools(List.of(new HostToolSpec("pick_date", "Lets the person pick a date", "{}"))));
        await(() -> store.lastSeq(ticket.runId()), last -> last >= 10, "some frames to be stored");

        first.close();
        assertThat(store.findRun(ticket.runId()).orElseThrow().status()).isEqualTo(RunStatus.INTERRUPTED);
        assertThat(bridge.stoppedOrphans()).hasSize(1).allMatch(stop -> stop.startsWith(ticket.runId() + "@"));
        assertThat(store.findResumePoint(ticket.runId())).hasValueSatisfying(point ->
                assertThat(point.followable()).as("the point only names the run").isFalse());
    }

    @Test
    void aRunThatOffersBrowserToolsIsStoppedNotFollowedAfterItsHostDied() {
        ScriptedRuntime bridge = ScriptedRuntime.playing(Scripts.frames(60, 5));
        FailingStore storeOfFirst = new FailingStore(store);
        dev.parley.chat.store.ChatStore shared = store;
        store = storeOfFirst.store();
        ChatEngine first = engine(bridge);
        store = shared;
        String threadId = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = first.startRun(ALICE, threadId, StartRun.of("stream")
                .withClientTools(List.of(new HostToolSpec("pick_date", "Lets the person pick a date", "{}"))));
        await(() -> store.lastSeq(ticket.runId()), last -> last >= 10, "some frames to be stored");
        storeOfFirst.kill();

        ChatEngine next = engine(bridge);
        awaitRun(next, ticket.runId(), RunStatus.INTERRUPTED);
        assertThat(bridge.reattachments()).isEmpty();
        assertThat(bridge.stoppedOrphans()).hasSize(1);
    }

    /**
     * A runtime whose stop hangs (unreachable, no answer) does not hold a recovered run: it ends INTERRUPTED
     * within the cancel grace period, and its thread takes the next message.
     */
    @Test
    void aRecoveredRunEndsEvenIfStoppingItInTheRuntimeHangs() {
        String r = "s6";
        Run run = leftStreaming(r, List.of(word(r, 1)), new StoreBatch.ResumePoint(r, "hermes-run-9", 0));
        CountDownLatch never = new CountDownLatch(1);
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.frames(8, 0))
                .withCapabilities(EnumSet.of(Capability.CANCEL, Capability.APPROVALS))
                .withOrphanStops(() -> never.await(1, TimeUnit.MINUTES));
        ChatEngine engine = engine(runtime);

        awaitRun(engine, run.id(), RunStatus.INTERRUPTED);
        awaitRun(engine, engine.startRun(ALICE, run.threadId(), StartRun.of("again")).runId(), RunStatus.SUCCEEDED);
        never.countDown();
    }

    /**
     * A flapping store refuses the stream's part until the batch writer writes it row by row, then refuses its
     * event rows and every write: the part is kept. Its resume point must not be stored before its events
     * (a point ahead of the stored events makes a re-attached stream skip items the store does not hold).
     */
    @Test
    void aResumePointIsNeverStoredAheadOfTheEventsItCoversWhenTheStoreFlaps() {
        ChatStore real = store;
        AtomicBoolean flapping = new AtomicBoolean();
        Set<Long> attempted = ConcurrentHashMap.newKeySet();
        List<String> ahead = new CopyOnWriteArrayList<>();
        store = InterceptedStore.of(real, (method, args, proceed) -> {
            if (method.equals("write") && flapping.get()) {
                StoreBatch batch = (StoreBatch) args[0];
                batch.events().forEach(event -> attempted.add(event.seq()));
                for (StoreBatch.ResumePoint point : batch.resumePoints()) {
                    Set<Long> held = new HashSet<>();
                    real.readEvents(point.runId(), 0, 10_000).forEach(event -> held.add(event.seq()));
                    batch.events().forEach(event -> held.add(event.seq()));
                    if (!held.containsAll(attempted)) {
                        ahead.add(point.toString());
                    }
                }
                if (!batch.events().isEmpty()) {
                    throw new IllegalStateException("injected: the database refuses the rows");
                }
            }
            if (method.equals("reserveSeq") && ((Long) args[1]) == 0 && flapping.compareAndSet(true, false)) {
                throw new IllegalStateException("injected: the database takes no writes");
            }
            return proceed.call();
        });
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.frames(40, 10)));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("stream"));
        await(() -> real.lastSeq(ticket.runId()), last -> last >= 6, "some frames to be stored");
        flapping.set(true);

        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(flapping).as("the store flapped and came back").isFalse();
        assertThat(ahead).as("points stored ahead of their events").isEmpty();
        assertThat(streamedText(real.readEvents(run.id(), 0, 10_000))).isEqualTo(Scripts.framedAnswer(40));
    }
}
