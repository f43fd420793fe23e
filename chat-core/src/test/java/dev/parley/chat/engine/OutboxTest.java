package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.outbox.OutboxEntry;
import dev.parley.chat.outbox.OutboxEventType;
import dev.parley.chat.outbox.OutboxRouting;
import dev.parley.chat.outbox.OutboxStore;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.testing.InterceptedStore;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The engine's outbox: with an {@link OutboxRouting}, a run's end and each input request put an entry per
 * destination into the store write that stores them, never one without the other; without one, nothing.
 */
class OutboxTest extends EngineTestSupport {
    private static final OutboxRouting EVERYTHING_TO_OPS = type -> List.of("ops");
    private static final Instant LATER = Instant.parse("2100-01-01T00:00:00Z");

    private final InMemoryChatStore real = new InMemoryChatStore();

    OutboxTest() {
        store = real;
    }

    /** Every entry now in the outbox (claimed for good by the test: read once per test step). */
    private List<OutboxEntry> drain() {
        List<OutboxEntry> claimed = real.claimOutbox("test", LATER, LATER.plusSeconds(60), 1000);
        claimed.forEach(entry -> real.completeOutbox(entry.messageId(), entry.destination(), "test"));
        return claimed;
    }

    private PendingInput awaitPending(ChatEngine engine, String runId, InputKind kind) {
        return await(() -> engine.state(ALICE, runId).pendingInputs(), inputs -> inputs.stream()
                .anyMatch(i -> i.kind() == kind), kind + " to be pending").stream()
                .filter(i -> i.kind() == kind).findFirst().orElseThrow();
    }

    @Test
    void aRunThatSucceedsLeavesOneEntryPerDestinationThatWantsIt() {
        OutboxRouting routing = type -> type == OutboxEventType.RUN_SUCCEEDED ? List.of("ops", "audit")
                : type == OutboxEventType.RUN_FAILED ? List.of("ops") : List.of();
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.answer("hello there")), b -> b.outbox(routing));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("hi"));
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        List<OutboxEntry> entries = drain();
        assertThat(entries).extracting(OutboxEntry::destination).containsExactlyInAnyOrder("ops", "audit");
        assertThat(entries).allSatisfy(entry -> {
            assertThat(entry.type()).isEqualTo(OutboxEventType.RUN_SUCCEEDED);
            assertThat(entry.threadId()).isEqualTo(threadId);
            assertThat(entry.runId()).isEqualTo(ticket.runId());
            assertThat(entry.status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(entry.occurredAt()).isEqualTo(run.finishedAt());
            assertThat(entry.messageId()).isEqualTo(OutboxEntry.runEnded(run, "any").messageId());
        });
    }

    @Test
    void failuresCancelsAndInputRequestsEachGetTheirType() {
        ChatEngine failing = engine(ScriptedRuntime.playing(Scripts.failsWith("MODEL_ERROR", "boom")),
                b -> b.outbox(EVERYTHING_TO_OPS));
        String threadId = failing.createThread(ALICE, NewThread.empty()).id();
        String failed = failing.startRun(ALICE, threadId, StartRun.of("hi")).runId();
        awaitRun(failing, failed, RunStatus.FAILED);
        assertThat(drain()).singleElement().satisfies(entry -> {
            assertThat(entry.type()).isEqualTo(OutboxEventType.RUN_FAILED);
            assertThat(entry.inputId()).isNull();
        });

        ChatEngine clarifying = engine(ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Oslo", "Rome"))),
                b -> b.outbox(EVERYTHING_TO_OPS));
        String asking = clarifying.startRun(ALICE, threadId, StartRun.of("book a trip")).runId();
        PendingInput question = awaitPending(clarifying, asking, InputKind.CLARIFY);
        assertThat(drain()).as("stored before the question was shown").singleElement().satisfies(entry -> {
            assertThat(entry.type()).isEqualTo(OutboxEventType.INPUT_REQUESTED);
            assertThat(entry.inputId()).isEqualTo(question.inputId());
            assertThat(entry.inputKind()).isEqualTo(InputKind.CLARIFY);
            assertThat(entry.status()).isEqualTo(RunStatus.WAITING_FOR_INPUT);
        });
        clarifying.answer(ALICE, asking, question.inputId(), new ClarifyAnswer(List.of("Oslo")));
        awaitRun(clarifying, asking, RunStatus.SUCCEEDED);
        assertThat(drain()).extracting(OutboxEntry::type).containsExactly(OutboxEventType.RUN_SUCCEEDED);

        ChatEngine streaming = engine(ScriptedRuntime.playing(Scripts.streamsUntilCancelled()),
                b -> b.outbox(EVERYTHING_TO_OPS));
        String cancelled = streaming.startRun(ALICE, threadId, StartRun.of("go on")).runId();
        await(() -> streaming.state(ALICE, cancelled).run().status(), RunStatus.RUNNING::equals, "the run to start");
        streaming.cancel(ALICE, cancelled);
        awaitRun(streaming, cancelled, RunStatus.CANCELLED);
        assertThat(drain()).extracting(OutboxEntry::type, OutboxEntry::runId)
                .containsExactly(org.assertj.core.groups.Tuple.tuple(OutboxEventType.RUN_CANCELLED, cancelled));
    }

    @Test
    void aHostActionsApprovalIsAnInputRequest() {
        HostAction refund = new HostAction(new HostToolSpec("refund", "Refunds an order", "{\"type\":\"object\"}"),
                call -> "refunded", HostActionApproval.always(call -> "Refunds an order"));
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.callsHostAction("refund", "{\"order\":42}")),
                b -> b.hostAction(refund).outbox(EVERYTHING_TO_OPS));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        String runId = engine.startRun(ALICE, threadId, StartRun.of("refund it")).runId();
        PendingInput asked = awaitPending(engine, runId, InputKind.APPROVAL);
        assertThat(drain()).singleElement().satisfies(entry -> {
            assertThat(entry.type()).isEqualTo(OutboxEventType.INPUT_REQUESTED);
            assertThat(entry.inputKind()).isEqualTo(InputKind.APPROVAL);
            assertThat(entry.inputId()).isEqualTo(asked.inputId());
        });
        engine.answer(ALICE, runId, asked.inputId(), ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE));
        awaitRun(engine, runId, RunStatus.SUCCEEDED);
        assertThat(drain()).extracting(OutboxEntry::type).containsExactly(OutboxEventType.RUN_SUCCEEDED);
    }

    @Test
    void anApprovalTheRuntimeAsksItselfIsAnInputRequest() {
        ScriptedRuntime.Script asksItsOwnApproval = (request, p) -> {
            p.emit(new dev.parley.chat.event.AgentStreamEvent.InputRequested(request.runId() + ":approval", "cmd-1",
                    new dev.parley.chat.input.ApprovalRequest("terminal", "{\"command\":\"rm -rf /tmp/x\"}",
                            "Deletes /tmp/x", List.of(ApprovalDecision.ALWAYS_ALLOW), false), null, "tok-1"));
            p.awaitDecision("cmd-1");
            p.text("done");
            p.finish();
        };
        ChatEngine engine = engine(ScriptedRuntime.playing(asksItsOwnApproval), b -> b.outbox(EVERYTHING_TO_OPS));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        String runId = engine.startRun(ALICE, threadId, StartRun.of("clean up")).runId();
        awaitPending(engine, runId, InputKind.APPROVAL);
        assertThat(drain()).singleElement().satisfies(entry -> {
            assertThat(entry.type()).isEqualTo(OutboxEventType.INPUT_REQUESTED);
            assertThat(entry.inputId()).isEqualTo("cmd-1");
            assertThat(entry.inputKind()).isEqualTo(InputKind.APPROVAL);
        });
        engine.answer(ALICE, runId, "cmd-1", ApprovalAnswer.of(ApprovalDecision.ALWAYS_ALLOW));
        awaitRun(engine, runId, RunStatus.SUCCEEDED);
        assertThat(drain()).extracting(OutboxEntry::type).containsExactly(OutboxEventType.RUN_SUCCEEDED);
    }

    @Test
    void withoutARoutingOrWithNoDestinationNoEntryIsWritten() {
        List<StoreBatch> batches = new CopyOnWriteArrayList<>();
        store = InterceptedStore.keepingOutbox(real, (method, args, proceed) -> {
            if (method.equals("write")) {
                batches.add((StoreBatch) args[0]);
            }
            return proceed.call();
        });
        ChatEngine plain = engine(ScriptedRuntime.playing(Scripts.clarify("Which?", List.of("a"))));
        String threadId = plain.createThread(ALICE, NewThread.empty()).id();
        String runId = plain.startRun(ALICE, threadId, StartRun.of("hi")).runId();
        PendingInput question = awaitPending(plain, runId, InputKind.CLARIFY);
        plain.answer(ALICE, runId, question.inputId(), new ClarifyAnswer(List.of("a")));
        awaitRun(plain, runId, RunStatus.SUCCEEDED);

        ChatEngine nobody = engine(ScriptedRuntime.playing(Scripts.answer("ok")), b -> b.outbox(type -> List.of()));
        awaitRun(nobody, nobody.startRun(ALICE, threadId, StartRun.of("again")).runId(), RunStatus.SUCCEEDED);
        assertThat(batches).isNotEmpty().allSatisfy(batch -> assertThat(batch.outbox()).isEmpty());
        assertThat(real.countOutbox()).isEqualTo(new OutboxStore.Counts(0, 0));
    }

    @Test
    void erasingAnOwnerOrDeletingAThreadRemovesTheirEntries() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.answer("ok")), b -> b.outbox(EVERYTHING_TO_OPS));
        String erased = engine.createThread(ALICE, NewThread.empty()).id();
        String deleted = engine.createThread(ALICE, NewThread.empty()).id();
        String kept = engine.createThread("bob", NewThread.empty()).id();
        awaitRun(engine, engine.startRun(ALICE, erased, StartRun.of("a")).runId(), RunStatus.SUCCEEDED);
        awaitRun(engine, engine.startRun(ALICE, deleted, StartRun.of("b")).runId(), RunStatus.SUCCEEDED);
        String bobs = engine.startRun("bob", kept, StartRun.of("c")).runId();
        await(() -> engine.state("bob", bobs).run().status(), RunStatus.SUCCEEDED::equals, "bob's run");
        assertThat(real.countOutbox().pending()).isEqualTo(3);

        engine.deleteThread(ALICE, deleted);
        assertThat(real.countOutbox().pending()).isEqualTo(2);
        engine.eraseOwner(ALICE);
        assertThat(drain()).singleElement().satisfies(entry -> assertThat(entry.threadId()).isEqualTo(kept));
    }

    @Test
    void anOutboxNeedsAStoreThatKeepsOne() {
        store = InterceptedStore.of(real, (method, args, proceed) -> proceed.call());
        assertThatThrownBy(() -> engine(ScriptedRuntime.playing(Scripts.answer("ok")), b -> b.outbox(EVERYTHING_TO_OPS)))
                .isInstanceOfSatisfying(ChatException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.CONFIGURATION);
                    assertThat(e.getMessage()).contains("OutboxStore");
                });
    }

    /**
     * Writes of the run's end fail: twice before anything is stored, then once after the commit (its answer
     * lost, so the writer writes it again). After every write, whatever it did, the store holds the run's end
     * if and only if it holds its entry; in the end one entry, as at-least-once writing must not make two.
     */
    @Test
    void theEntryIsStoredIfAndOnlyIfTheRunsEndIsEvenWhenWritesFail() {
        AtomicInteger endWrites = new AtomicInteger();
        List<String> broken = new ArrayList<>();
        store = InterceptedStore.keepingOutbox(real, (method, args, proceed) -> {
            if (!method.equals("write")) {
                return proceed.call();
            }
            StoreBatch batch = (StoreBatch) args[0];
            boolean ending = batch.runs().stream().anyMatch(run -> run.status().isTerminal());
            try {
                if (ending && endWrites.incrementAndGet() <= 2) {
                    throw new ChatException(ErrorCode.STORE_FAILURE, "injected: the write failed");
                }
                Object result = proceed.call();
                if (ending && endWrites.get() == 3) {
                    throw new ChatException(ErrorCode.STORE_FAILURE, "injected: the commit's answer was lost");
                }
                return result;
            } finally {
                for (Run run : batch.runs()) {
                    boolean ended = real.findRun(run.id()).map(r -> r.status().isTerminal()).orElse(false);
                    boolean entry = real.countOutbox().pending() > 0;
                    if (ended != entry) {
                        broken.add("after write " + endWrites.get() + ": ended=" + ended + ", entry=" + entry);
                    }
                }
            }
        });
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.answer("hello")), b -> b.outbox(EVERYTHING_TO_OPS));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        String runId = engine.startRun(ALICE, threadId, StartRun.of("hi")).runId();
        awaitRun(engine, runId, RunStatus.SUCCEEDED);
        await(() -> real.findRun(runId).orElseThrow().status(), RunStatus.SUCCEEDED::equals, "the end to be stored");

        assertThat(endWrites.get()).as("the faults were injected").isGreaterThanOrEqualTo(3);
        assertThat(broken).isEmpty();
        assertThat(drain()).singleElement().satisfies(entry -> assertThat(entry.runId()).isEqualTo(runId));
        assertThat(Set.copyOf(drain())).isEmpty();
    }
}
