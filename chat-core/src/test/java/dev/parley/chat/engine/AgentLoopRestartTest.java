package dev.parley.chat.engine;

import static dev.parley.chat.testing.ScriptedModel.Reply.reply;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.agent.ModelMessage;
import dev.parley.chat.agent.ToolCall;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.TokenUsage;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.EventCollector;
import dev.parley.chat.testing.FailingStore;
import dev.parley.chat.testing.InProcessCoordinators;
import dev.parley.chat.testing.ScriptedModel;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * An agent-loop run that waits for the person's approval of a host action when the host stops is continued by
 * the next host process from the store: nothing is asked again, the action runs once after the answer, and the
 * model goes on from the exchange it had.
 */
class AgentLoopRestartTest {
    private static final String ALICE = "alice";

    private final InMemoryChatStore store = new InMemoryChatStore();
    private final List<String> refunds = new CopyOnWriteArrayList<>();
    private final List<String> lookups = new CopyOnWriteArrayList<>();
    private final List<ChatEngine> engines = new CopyOnWriteArrayList<>();

    @AfterEach
    void closeEngines() {
        engines.forEach(ChatEngine::close);
    }

    private ChatEngine engine(ScriptedModel model, Duration approvalTimeout) {
        HostActionApproval approval = HostActionApproval.always(call -> "Refunds an order");
        ChatEngine engine = ChatEngine.builder().store(store)
                .runtime(AgentLoopRuntime.builder(model).maxIterations(4).build())
                .hostAction(new HostAction(new HostToolSpec("lookup_order", "Finds an order", "{}"), call -> {
                    lookups.add(call.arguments());
                    return "shipped";
                }))
                .hostAction(new HostAction(new HostToolSpec("refund", "Refunds an order", "{}"), call -> {
                    refunds.add(call.arguments());
                    return "refunded";
                }, approvalTimeout == null ? approval : approval.withTimeout(approvalTimeout)))
                .build();
        engines.add(engine);
        return engine;
    }

    private ChatEngine engine(ScriptedModel model) {
        return engine(model, null);
    }

    private static PendingInput awaitApproval(ChatEngine engine, String runId) {
        return Await.until(() -> engine.state(ALICE, runId).pendingInputs(), pending -> !pending.isEmpty(),
                "the approval").get(0);
    }

    private static Run awaitRun(ChatEngine engine, String runId, RunStatus status) {
        return Await.until(() -> engine.state(ALICE, runId).run(), r -> r.status() == status, "the run to be " + status);
    }

    private long eventsOfType(String runId, String type) {
        return store.readEvents(runId, 0, 1_000).stream().filter(e -> e.type().equals(type)).count();
    }

    @Test
    void anApprovalWaitingWhenTheHostStopsIsAskedNoMoreAndTheActionRunsOnceAfterTheAnswer() {
        ChatEngine first = engine(ScriptedModel.replying(
                reply().text("Let me check.").toolCall(0, "call_1", "refund", "{\"order\":9}").usage(20, 5)));
        String threadId = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = first.startRun(ALICE, threadId, StartRun.of("refund order 9"));
        PendingInput asked = awaitApproval(first, ticket.runId());
        first.close();
        assertThat(store.findRun(ticket.runId()).orElseThrow().status())
                .as("the closing engine leaves the waiting run to the next one").isEqualTo(RunStatus.WAITING_FOR_INPUT);

        ScriptedModel after = ScriptedModel.replying(reply().text("Refunded.").usage(30, 4));
        ChatEngine second = engine(after);
        assertThat(second.state(ALICE, ticket.runId()).pendingInputs()).extracting(PendingInput::inputId)
                .containsExactly(asked.inputId());
        assertThat(second.answer(ALICE, ticket.runId(), asked.inputId(), ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE)))
                .isEqualTo(AnswerResult.ACCEPTED);
        Run done = awaitRun(second, ticket.runId(), RunStatus.SUCCEEDED);

        assertThat(refunds).containsExactly("{\"order\":9}");
        assertThat(eventsOfType(ticket.runId(), AgentStreamEvent.InputRequested.TYPE)).as("asked once").isEqualTo(1);
        assertThat(store.readEvents(ticket.runId(), 0, 1_000)).filteredOn(e -> e.event().isTerminal()).hasSize(1);
        assertThat(after.requests()).singleElement().satisfies(request -> assertThat(request.messages()).containsExactly(
                new ModelMessage.User("refund order 9"),
                new ModelMessage.Assistant("Let me check.", List.of(new ToolCall("call_1", "refund", "{\"order\":9}"))),
                new ModelMessage.ToolResult("call_1", "refund", "refunded", false)));
        assertThat(((AssistantMessage) store.findMessage(done.assistantMessageId()).orElseThrow()).text())
                .isEqualTo("Let me check.\n\nRefunded.");
        assertThat(done.usage()).as("counted over both processes").isEqualTo(new TokenUsage(50, 9, 59));
    }

    /**
     * An answer stored while no instance follows the run (its sender is still handing it on, and takes it back
     * when nobody takes it) does not make the recovering instance think the run waits for nothing: the run is
     * continued, the answer taken back is sent again, and the action runs once.
     */
    @Test
    void anAnswerOnItsWayWhileTheRunIsRecoveredDoesNotStopTheRun() {
        ChatEngine first = engine(ScriptedModel.replying(reply().toolCall(0, "x", "refund", "{\"order\":5}")));
        String threadId = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = first.startRun(ALICE, threadId, StartRun.of("refund order 5"));
        PendingInput asked = awaitApproval(first, ticket.runId());
        first.close();
        ApprovalAnswer allow = ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE);
        store.answerInput(ticket.runId(), asked.inputId(), allow, java.time.Instant.now());

        ChatEngine second = engine(ScriptedModel.replying(reply().text("Refunded.")));
        assertThat(second.state(ALICE, ticket.runId()).run().status()).as("continued, not stopped")
                .isEqualTo(RunStatus.WAITING_FOR_INPUT);
        store.reopenInput(ticket.runId(), asked.inputId());
        assertThat(second.answer(ALICE, ticket.runId(), asked.inputId(), allow)).isEqualTo(AnswerResult.ACCEPTED);
        awaitRun(second, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(refunds).containsExactly("{\"order\":5}");
    }

    /**
     * Two calls in one model response: the lookup ran before the host stopped, the refund waited for its
     * approval. The next process runs neither again unasked: the lookup's stored result is what the model
     * gets, next to the refund's.
     */
    @Test
    void aCallThatRanBeforeTheRestartIsNotRunAgainAndItsResultReachesTheModel() {
        ChatEngine first = engine(ScriptedModel.replying(reply()
                .toolCall(0, "a", "lookup_order", "{\"id\":1}").toolCall(1, "b", "refund", "{\"order\":1}")));
        String threadId = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = first.startRun(ALICE, threadId, StartRun.of("refund order 1 if it shipped"));
        PendingInput asked = awaitApproval(first, ticket.runId());
        EventCollector events = EventCollector.unbounded().subscribeTo(first.subscribe(ALICE, ticket.runId(), 0));
        Await.until(events::events, logged -> logged.stream().anyMatch(
                e -> e.event() instanceof AgentStreamEvent.ToolCallResult), "the lookup's result");
        first.close();

        ScriptedModel after = ScriptedModel.replying(reply().text("Done."));
        ChatEngine second = engine(after);
        second.answer(ALICE, ticket.runId(), asked.inputId(), ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE));
        awaitRun(second, ticket.runId(), RunStatus.SUCCEEDED);

        assertThat(lookups).containsExactly("{\"id\":1}");
        assertThat(refunds).containsExactly("{\"order\":1}");
        assertThat(after.requests().get(0).messages()).containsExactly(
                new ModelMessage.User("refund order 1 if it shipped"),
                new ModelMessage.Assistant("", List.of(new ToolCall("a", "lookup_order", "{\"id\":1}"),
                        new ToolCall("b", "refund", "{\"order\":1}"))),
                new ModelMessage.ToolResult("a", "lookup_order", "shipped", false),
                new ModelMessage.ToolResult("b", "refund", "refunded", false));
    }

    /**
     * With several instances, the one that takes a dead instance's run over after its lease continues it the
     * same way: the approval asked on the dead instance is answered on the live one, and the action runs once.
     */
    @Test
    void anotherInstanceTakesOverARunWaitingForAnApprovalAndRunsTheActionOnceAfterTheAnswer() {
        try (InProcessCoordinators hub = new InProcessCoordinators()) {
            FailingStore storeOfA = new FailingStore(store);
            ChatEngine a = ChatEngine.builder().store(storeOfA.store())
                    .runtime(AgentLoopRuntime.builder(ScriptedModel.replying(
                            reply().toolCall(0, "x", "refund", "{\"order\":3}"))).build())
                    .hostAction(refundAsking())
                    .coordinator(hub.join("a")).leaseTimeout(Duration.ofMillis(900)).build();
            engines.add(a);
            ScriptedModel onB = ScriptedModel.replying(reply().text("Refunded."));
            ChatEngine b = ChatEngine.builder().store(store).runtime(AgentLoopRuntime.builder(onB).build())
                    .hostAction(refundAsking())
                    .coordinator(hub.join("b")).leaseTimeout(Duration.ofMillis(900)).build();
            engines.add(b);
            String threadId = a.createThread(ALICE, NewThread.empty()).id();
            RunTicket ticket = a.startRun(ALICE, threadId, StartRun.of("refund order 3"));
            PendingInput asked = awaitApproval(a, ticket.runId());

            storeOfA.kill();
            hub.disconnect("a");
            Await.until(() -> store.findLease(ticket.runId()).map(lease -> lease.instanceId()).orElse(""),
                    "b"::equals, "instance b to take the run over");
            Await.until(() -> tryAnswer(b, ticket.runId(), asked.inputId()), accepted -> accepted,
                    "the answer to be taken once b follows the run");
            awaitRun(b, ticket.runId(), RunStatus.SUCCEEDED);
            assertThat(refunds).containsExactly("{\"order\":3}");
            assertThat(eventsOfType(ticket.runId(), AgentStreamEvent.InputRequested.TYPE)).isEqualTo(1);
            assertThat(onB.requests()).singleElement().satisfies(request -> assertThat(request.messages()).last()
                    .isEqualTo(new ModelMessage.ToolResult("x", "refund", "refunded", false)));
        }
    }

    private HostAction refundAsking() {
        return new HostAction(new HostToolSpec("refund", "Refunds an order", "{}"), call -> {
            refunds.add(call.arguments());
            return "refunded";
        }, HostActionApproval.always(call -> "Refunds an order"));
    }

    /** True once the answer is taken; false while the run is not followed yet (RUNTIME_UNAVAILABLE). */
    private static boolean tryAnswer(ChatEngine engine, String runId, String inputId) {
        try {
            return engine.answer(ALICE, runId, inputId, ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE))
                    == AnswerResult.ACCEPTED;
        } catch (dev.parley.chat.ChatException e) {
            if (e.code() != dev.parley.chat.ErrorCode.RUNTIME_UNAVAILABLE) {
                throw e;
            }
            return false;
        }
    }

    /** The approval's deadline still holds after the restart: it expires, and the model reads why. */
    @Test
    void anApprovalThatExpiresAfterTheRestartGoesBackToTheModelAsAnError() {
        ChatEngine first = engine(ScriptedModel.replying(reply().toolCall(0, "x", "refund", "{}")),
                Duration.ofSeconds(2));
        String threadId = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = first.startRun(ALICE, threadId, StartRun.of("refund"));
        PendingInput asked = awaitApproval(first, ticket.runId());
        first.close();

        ScriptedModel after = ScriptedModel.replying(reply().text("Nobody approved it."));
        ChatEngine second = engine(after, Duration.ofSeconds(2));
        awaitRun(second, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(refunds).isEmpty();
        assertThat(store.findInput(ticket.runId(), asked.inputId()).orElseThrow().state()).isEqualTo(InputState.EXPIRED);
        assertThat((ModelMessage.ToolResult) after.requests().get(0).messages().get(2)).satisfies(result -> {
            assertThat(result.error()).isTrue();
            assertThat(result.result()).isEqualTo("the call of refund was not approved in time");
        });
    }

    /** A host action the next process no longer offers cannot run: the run is interrupted, its approval withdrawn. */
    @Test
    void aRunWhoseActionTheNextHostNoLongerOffersIsInterrupted() {
        ChatEngine first = engine(ScriptedModel.replying(reply().toolCall(0, "x", "refund", "{}")));
        String threadId = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = first.startRun(ALICE, threadId, StartRun.of("refund"));
        PendingInput asked = awaitApproval(first, ticket.runId());
        first.close();

        ChatEngine second = ChatEngine.builder().store(store)
                .runtime(AgentLoopRuntime.builder(ScriptedModel.replying(reply().text("unused"))).build()).build();
        engines.add(second);
        awaitRun(second, ticket.runId(), RunStatus.INTERRUPTED);
        assertThat(store.findInput(ticket.runId(), asked.inputId()).orElseThrow().state())
                .isEqualTo(InputState.CANCELLED);
        List<RunEvent> logged = store.readEvents(ticket.runId(), 0, 1_000);
        assertThat(logged).filteredOn(e -> e.event().isTerminal()).singleElement()
                .satisfies(e -> assertThat(((AgentStreamEvent.RunFinished) e.event()).status())
                        .isEqualTo(RunStatus.INTERRUPTED));
    }
}
