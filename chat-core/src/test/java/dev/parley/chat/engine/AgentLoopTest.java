package dev.parley.chat.engine;

import static dev.parley.chat.testing.ScriptedModel.Reply.reply;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.RunErrorCode;
import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.agent.ModelFailure;
import dev.parley.chat.agent.ModelMessage;
import dev.parley.chat.agent.ModelRequest;
import dev.parley.chat.agent.ToolCall;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ClientToolAnswer;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.StatusMessage;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.TokenUsage;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.SkillOption;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.ScriptedModel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/** The model-agnostic agent loop, driven by a scripted model through the whole engine. */
class AgentLoopTest {
    private static final String ALICE = "alice";
    private static final HostToolSpec LOOKUP = new HostToolSpec("lookup_order", "Finds an order",
            "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}}}");

    private final InMemoryChatStore store = new InMemoryChatStore();
    private final List<String> lookups = new CopyOnWriteArrayList<>();

    private ChatEngine engine(ScriptedModel model, java.util.function.Consumer<ChatEngine.Builder> config) {
        ChatEngine.Builder builder = ChatEngine.builder().store(store)
                .runtime(AgentLoopRuntime.builder(model).maxIterations(4)
                        .systemPrompts(List.of(new SkillOption("travel", "Travel", "plans trips")),
                                skill -> skill.equals("travel") ? "You plan trips." : null)
                        .build())
                .limits(EngineLimits.defaults().withCancelGracePeriod(Duration.ofMillis(500)))
                .hostAction(new HostAction(LOOKUP, call -> {
                    lookups.add(call.arguments());
                    return "{\"status\":\"shipped\"}";
                }));
        config.accept(builder);
        return builder.build();
    }

    private ChatEngine engine(ScriptedModel model) {
        return engine(model, b -> {
        });
    }

    private Run run(ChatEngine engine, String threadId, StartRun request, RunStatus expected) {
        RunTicket ticket = engine.startRun(ALICE, threadId, request);
        return dev.parley.chat.testing.Await.until(() -> engine.state(ALICE, ticket.runId()).run(),
                r -> r.status() == expected, "the run to be " + expected);
    }

    private List<Message> messagesOf(Run run) {
        List<Message> messages = new ArrayList<>();
        messages.add(store.findMessage(run.assistantMessageId()).orElseThrow());
        messages.addAll(store.listStepMessagesAfter(run.id(), null, 1_000));
        return messages;
    }

    private String answer(Run run) {
        return ((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text();
    }

    @Test
    void aStreamedAnswerWithThinkingAndUsage() {
        ScriptedModel model = ScriptedModel.replying(reply().thinking("Let me ", "think.").text("Hel", "lo", "!")
                .usage(10, 3));
        try (ChatEngine engine = engine(model)) {
            String threadId = engine.createThread(ALICE, new NewThread(null, null, "travel")).id();
            Run run = run(engine, threadId, StartRun.of("hi"), RunStatus.SUCCEEDED);
            assertThat(answer(run)).isEqualTo("Hello!");
            assertThat(messagesOf(run)).filteredOn(ThinkingMessage.class::isInstance).singleElement()
                    .satisfies(m -> assertThat(((ThinkingMessage) m).text()).isEqualTo("Let me think."));
            assertThat(run.usage()).isEqualTo(new TokenUsage(10, 3, 13));
            ModelRequest sent = model.requests().get(0);
            assertThat(sent.systemPrompt()).isEqualTo("You plan trips.");
            assertThat(sent.messages()).containsExactly(new ModelMessage.User("hi"));
            assertThat(sent.tools()).extracting(HostToolSpec::name).containsExactly("lookup_order");
        }
    }

    @Test
    void aHostActionIsCalledAndItsResultFedBackThenUsageIsSummed() {
        ScriptedModel model = ScriptedModel.replying(
                reply().text("Checking.").toolCall(0, "call_1", "lookup_order", "{\"id\":", "42}").usage(20, 5),
                reply().text("It has shipped.").usage(30, 4));
        try (ChatEngine engine = engine(model)) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            Run run = run(engine, threadId, StartRun.of("where is order 42?"), RunStatus.SUCCEEDED);
            assertThat(lookups).containsExactly("{\"id\":42}");
            assertThat(answer(run)).isEqualTo("Checking.\n\nIt has shipped.");
            assertThat(run.usage()).isEqualTo(new TokenUsage(50, 9, 59));
            List<ModelMessage> second = model.requests().get(1).messages();
            assertThat(second).containsExactly(new ModelMessage.User("where is order 42?"),
                    new ModelMessage.Assistant("Checking.", List.of(new ToolCall("call_1", "lookup_order", "{\"id\":42}"))),
                    new ModelMessage.ToolResult("call_1", "lookup_order", "{\"status\":\"shipped\"}", false));
            assertThat(messagesOf(run)).filteredOn(ResultMessage.class::isInstance).singleElement()
                    .satisfies(m -> assertThat(((ResultMessage) m).result()).isEqualTo("{\"status\":\"shipped\"}"));
        }
    }

    @Test
    void twoCallsInOneResponseAndAToolNobodyOffersAreAllAnswered() {
        ScriptedModel model = ScriptedModel.replying(
                reply().toolCall(0, "a", "lookup_order", "{\"id\":1}").completeToolCall("b", "teleport", "{}")
                        .toolCall(2, "c", "lookup_order", "{\"id\":", "2}"),
                reply().text("Done."));
        try (ChatEngine engine = engine(model)) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            run(engine, threadId, StartRun.of("check both"), RunStatus.SUCCEEDED);
            assertThat(lookups).containsExactlyInAnyOrder("{\"id\":1}", "{\"id\":2}");
            List<ModelMessage> second = model.requests().get(1).messages();
            assertThat(second.subList(2, 5)).extracting(m -> ((ModelMessage.ToolResult) m).callId()).containsExactly("a", "b", "c");
            assertThat((ModelMessage.ToolResult) second.get(3)).satisfies(r -> {
                assertThat(r.error()).isTrue();
                assertThat(r.result()).contains("no tool named teleport");
            });
        }
    }

    @Test
    void aDeniedApprovalGoesBackToTheModelAsAnErrorItCanRead() {
        ScriptedModel model = ScriptedModel.replying(reply().toolCall(0, "x", "refund", "{\"order\":9}"),
                reply().text("Understood, no refund."));
        List<String> refunds = new CopyOnWriteArrayList<>();
        try (ChatEngine engine = engine(model, b -> b.hostAction(new HostAction(new HostToolSpec("refund", "Refunds", "{}"),
                call -> {
                    refunds.add(call.arguments());
                    return "refunded";
                }, HostActionApproval.always(call -> "Refunds order 9"))))) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("refund order 9"));
            PendingInput asked = dev.parley.chat.testing.Await.until(() -> engine.state(ALICE, ticket.runId()).pendingInputs(),
                    pending -> !pending.isEmpty(), "the approval").get(0);
            assertThat(asked.kind()).isEqualTo(InputKind.APPROVAL);
            engine.answer(ALICE, ticket.runId(), asked.inputId(), ApprovalAnswer.of(ApprovalDecision.DENY));
            Run run = dev.parley.chat.testing.Await.until(() -> engine.state(ALICE, ticket.runId()).run(),
                    r -> r.status() == RunStatus.SUCCEEDED, "the end");
            assertThat(refunds).isEmpty();
            assertThat(answer(run)).isEqualTo("Understood, no refund.");
            assertThat((ModelMessage.ToolResult) model.requests().get(1).messages().get(2)).satisfies(r -> {
                assertThat(r.error()).isTrue();
                assertThat(r.result()).isEqualTo("the person denied this call of refund");
            });
        }
    }

    @Test
    void aToolThePageRunsIsAskedOfThePageAndItsResultFedBack() {
        HostToolSpec pickDate = new HostToolSpec("pick_date", "Lets the person pick a date", "{\"type\":\"object\"}");
        ScriptedModel model = ScriptedModel.replying(reply().toolCall(0, "p", "pick_date", "{}"),
                reply().text("See you on the 14th."));
        try (ChatEngine engine = engine(model)) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("when?").withClientTools(List.of(pickDate)));
            PendingInput asked = dev.parley.chat.testing.Await.until(() -> engine.state(ALICE, ticket.runId()).pendingInputs(),
                    pending -> !pending.isEmpty(), "the client tool").get(0);
            assertThat(model.requests().get(0).tools()).extracting(HostToolSpec::name).contains("pick_date");
            engine.answer(ALICE, ticket.runId(), asked.inputId(), new ClientToolAnswer("2027-03-14", false));
            dev.parley.chat.testing.Await.until(() -> engine.state(ALICE, ticket.runId()).run().status(),
                    s -> s == RunStatus.SUCCEEDED, "the end");
            assertThat(((ModelMessage.ToolResult) model.requests().get(1).messages().get(2)).result()).isEqualTo("2027-03-14");
        }
    }

    @Test
    void theThirdTurnCarriesTheFirstTwo() {
        ScriptedModel model = ScriptedModel.choosing(request -> reply().text("answer " + request.messages().size()));
        try (ChatEngine engine = engine(model)) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            run(engine, threadId, StartRun.of("one"), RunStatus.SUCCEEDED);
            run(engine, threadId, StartRun.of("two"), RunStatus.SUCCEEDED);
            run(engine, threadId, StartRun.of("three"), RunStatus.SUCCEEDED);
            assertThat(model.requests().get(2).messages()).containsExactly(new ModelMessage.User("one"),
                    new ModelMessage.Assistant("answer 1", List.of()), new ModelMessage.User("two"),
                    new ModelMessage.Assistant("answer 3", List.of()), new ModelMessage.User("three"));
        }
    }

    @Test
    void aCancelStopsTheCallInFlightAndKeepsThePartialAnswer() {
        ScriptedModel model = ScriptedModel.replying(reply().text("Partial ans").hangUntilCancelled());
        try (ChatEngine engine = engine(model)) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("go"));
            dev.parley.chat.testing.Await.until(() -> engine.state(ALICE, ticket.runId()).lastSeq(), seq -> seq >= 3,
                    "the partial text");
            engine.cancel(ALICE, ticket.runId());
            Run run = dev.parley.chat.testing.Await.until(() -> engine.state(ALICE, ticket.runId()).run(),
                    r -> r.status() == RunStatus.CANCELLED, "the cancel");
            assertThat(answer(run)).isEqualTo("Partial ans");
            // The run can end before the loop's thread has cancelled the call it was reading.
            assertThat(dev.parley.chat.testing.Await.until(model::cancels, c -> c > 0, "the model call's cancel"))
                    .isEqualTo(1);
        }
    }

    @Test
    void aSkillTheLoopHasNoPromptForIsRefusedBeforeAnythingIsStored() {
        ScriptedModel model = ScriptedModel.replying(reply().text("Hi"));
        try (ChatEngine withSkills = engine(model);
                ChatEngine withoutSkills = ChatEngine.builder().store(store)
                        .runtime(AgentLoopRuntime.builder(model).build()).build()) {
            for (ChatEngine engine : List.of(withSkills, withoutSkills)) {
                String threadId = engine.createThread(ALICE, NewThread.empty()).id();
                assertThatThrownBy(() -> engine.startRun(ALICE, threadId,
                        new StartRun("hi", null, "../../etc/passwd", null, Map.of())))
                        .isInstanceOfSatisfying(ChatException.class,
                                e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT));
                assertThat(store.listTopLevelMessages(threadId, null, 10)).isEmpty();
            }
            assertThat(model.requests()).isEmpty();
        }
    }

    @Test
    void theIterationBudgetEndsALoopThatNeverAnswers() {
        ScriptedModel model = ScriptedModel.replying(reply().toolCall(0, "again", "lookup_order", "{\"id\":1}"));
        try (ChatEngine engine = engine(model)) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            Run run = run(engine, threadId, new StartRun("loop", null, null, 2, Map.of()), RunStatus.SUCCEEDED);
            assertThat(model.requests()).hasSize(2);
            assertThat(messagesOf(run)).filteredOn(StatusMessage.class::isInstance).singleElement()
                    .satisfies(m -> assertThat(((StatusMessage) m).text()).contains("budget of 2"));
        }
    }

    @Test
    void aFailingModelFailsTheRunWithACodeThePersonCanActOn() {
        for (ModelFailure.Kind kind : ModelFailure.Kind.values()) {
            ScriptedModel model = ScriptedModel.replying(reply().text("Hal").fail(kind, "the provider said no"));
            try (ChatEngine engine = engine(model)) {
                String threadId = engine.createThread(ALICE, NewThread.empty()).id();
                Run run = run(engine, threadId, StartRun.of("hi"), RunStatus.FAILED);
                assertThat(run.error().code()).as(kind.name()).isEqualTo(kind.code().name());
                assertThat(run.error().knownCode()).as(kind.name()).isEqualTo(RunErrorCode.of(kind.code()));
                assertThat(run.error().message()).isEqualTo("the provider said no");
                assertThat(run.error().retryAfterSeconds()).isNull();
                assertThat(answer(run)).isEqualTo("Hal");
            }
        }
    }

    @Test
    void aRateLimitCarriesTheProvidersRetryAfterOnTheRunsError() {
        ModelFailure limited = ModelFailure.ofHttpStatus(429, "{\"error\":{\"message\":\"slow down\"}}", null,
                Duration.ofMillis(19_200));
        ScriptedModel model = ScriptedModel.replying(reply().text("Hal").fail(limited));
        try (ChatEngine engine = engine(model)) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            Run run = run(engine, threadId, StartRun.of("hi"), RunStatus.FAILED);

            assertThat(run.error().knownCode()).isEqualTo(RunErrorCode.RATE_LIMITED);
            assertThat(run.error().retryAfterSeconds()).as("rounded up to whole seconds").isEqualTo(20L);
            assertThat(run.error().message()).contains("slow down").contains("retry after 20 s");
            AssistantMessage answer = (AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow();
            assertThat(answer.error()).isEqualTo(run.error());
            assertThat(store.findRun(run.id()).orElseThrow().error().retryAfterSeconds()).isEqualTo(20L);
        }
    }
}
