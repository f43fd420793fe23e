package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.ClientToolAnswer;
import dev.parley.chat.input.ClientToolRequest;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ApprovalMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.ApprovalReply;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.ToolResult;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.testing.InterceptedStore;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.time.Duration;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Approvals, client tools and clarify questions as pending inputs: one life cycle, one answer call. */
class PendingInputsTest extends EngineTestSupport {
    private static final HostToolSpec REFUND = new HostToolSpec("refund", "Refunds an order", "{\"type\":\"object\"}");
    private static final HostToolSpec PICK_DATE = new HostToolSpec("pick_date", "Lets the person pick a date",
            "{\"type\":\"object\",\"properties\":{\"month\":{\"type\":\"integer\"}}}");

    private final List<String> handled = new CopyOnWriteArrayList<>();

    private HostAction refund(HostActionApproval approval) {
        return new HostAction(REFUND, call -> {
            handled.add(call.arguments());
            return "refunded " + call.arguments();
        }, approval);
    }

    private static HostActionApproval askEveryTime() {
        return HostActionApproval.always(call -> "Refunds " + call.arguments() + " to the card; cannot be undone");
    }

    private PendingInput awaitPending(ChatEngine engine, String runId, InputKind kind) {
        return await(() -> engine.state(ALICE, runId).pendingInputs(), inputs -> inputs.stream()
                .anyMatch(i -> i.kind() == kind), kind + " to be pending").stream()
                .filter(i -> i.kind() == kind).findFirst().orElseThrow();
    }

    private String assistantText(Run run) {
        return ((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text();
    }

    private ApprovalMessage approvalMessageOf(Run run) {
        return storedMessagesOf(run).stream().filter(ApprovalMessage.class::isInstance).map(ApprovalMessage.class::cast)
                .findFirst().orElseThrow();
    }

    // ------------------------------------------------------------------ host actions that ask first

    @Test
    void anApprovedCallRunsOnceAndItsDecisionIsRecorded() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.callsHostAction("refund", "{\"order\":42}"));
        ChatEngine engine = engine(runtime, b -> b.hostAction(refund(askEveryTime())));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("refund it"));

        PendingInput asked = awaitPending(engine, ticket.runId(), InputKind.APPROVAL);
        assertThat(engine.state(ALICE, ticket.runId()).run().status()).isEqualTo(RunStatus.WAITING_FOR_INPUT);
        ApprovalRequest request = (ApprovalRequest) asked.request();
        assertThat(request.toolName()).isEqualTo("refund");
        assertThat(request.arguments()).isEqualTo("{\"order\":42}");
        assertThat(request.description()).isEqualTo("Refunds {\"order\":42} to the card; cannot be undone");
        assertThat(request.decisions()).containsExactly(ApprovalDecision.ALLOW_ONCE, ApprovalDecision.DENY);
        assertThat(handled).as("nothing runs before the decision").isEmpty();
        assertThat(store.findInput(ticket.runId(), asked.inputId())).as("stored before it was shown").isPresent();

        ApprovalAnswer allow = ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE);
        assertThat(engine.answer(ALICE, ticket.runId(), asked.inputId(), allow)).isEqualTo(AnswerResult.ACCEPTED);
        assertThat(engine.answer(ALICE, ticket.runId(), asked.inputId(), allow)).isEqualTo(AnswerResult.REPLAYED);
        assertCode(ErrorCode.CONFLICT, () -> engine.answer(ALICE, ticket.runId(), asked.inputId(),
                ApprovalAnswer.of(ApprovalDecision.DENY)));

        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(handled).containsExactly("{\"order\":42}");
        assertThat(assistantText(run)).isEqualTo("The tool said: refunded {\"order\":42}");
        ApprovalMessage recorded = approvalMessageOf(run);
        assertThat(recorded.status()).isEqualTo(MessageStatus.COMPLETED);
        assertThat(recorded.outcome()).isEqualTo(InputState.ANSWERED);
        assertThat(recorded.decision()).isEqualTo(ApprovalDecision.ALLOW_ONCE);
        assertThat(store.findInput(ticket.runId(), asked.inputId()).orElseThrow().state()).isEqualTo(InputState.ANSWERED);
    }

    @Test
    void aDeniedCallDoesNotRunAndTheModelIsToldWhy() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.callsHostAction("refund", "{\"order\":7}"));
        ChatEngine engine = engine(runtime, b -> b.hostAction(refund(askEveryTime())));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("refund it"));

        PendingInput asked = awaitPending(engine, ticket.runId(), InputKind.APPROVAL);
        engine.answer(ALICE, ticket.runId(), asked.inputId(), ApprovalAnswer.of(ApprovalDecision.DENY));
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(handled).isEmpty();
        assertThat(runtime.toolResults()).singleElement().satisfies(result -> {
            assertThat(result.error()).isTrue();
            assertThat(result.result()).isEqualTo("the person denied this call of refund");
        });
        assertThat(approvalMessageOf(run).decision()).isEqualTo(ApprovalDecision.DENY);
        assertThat(storedMessagesOf(run)).filteredOn(ResultMessage.class::isInstance)
                .allSatisfy(m -> assertThat(((ResultMessage) m).error()).isTrue());
    }

    @Test
    void editedArgumentsReachTheHandlerOnlyWhereEditingIsAllowed() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.callsHostAction("refund", "{\"order\":1}"));
        ChatEngine engine = engine(runtime, b -> b.hostAction(refund(askEveryTime().withEditableArguments())));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("refund it"));
        PendingInput asked = awaitPending(engine, ticket.runId(), InputKind.APPROVAL);
        assertThat(((ApprovalRequest) asked.request()).argumentsEditable()).isTrue();

        assertCode(ErrorCode.INVALID_INPUT, () -> engine.answer(ALICE, ticket.runId(), asked.inputId(),
                new ApprovalAnswer(ApprovalDecision.ALLOW_ONCE, "{not json")));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.answer(ALICE, ticket.runId(), asked.inputId(),
                new ApprovalAnswer(ApprovalDecision.DENY, "{\"order\":2}")));
        engine.answer(ALICE, ticket.runId(), asked.inputId(), new ApprovalAnswer(ApprovalDecision.ALLOW_ONCE,
                "{\"order\":2}"));
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(handled).containsExactly("{\"order\":2}");
        assertThat(approvalMessageOf(run).editedArguments()).isEqualTo("{\"order\":2}");
    }

    @Test
    void answersOfTheWrongShapeAreRefusedAndChangeNothing() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.callsHostAction("refund", "{\"order\":1}"));
        ChatEngine engine = engine(runtime, b -> b.hostAction(refund(askEveryTime())));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("refund it"));
        PendingInput asked = awaitPending(engine, ticket.runId(), InputKind.APPROVAL);
        long seqBefore = engine.state(ALICE, ticket.runId()).lastSeq();

        assertCode(ErrorCode.INVALID_INPUT, () -> engine.answer(ALICE, ticket.runId(), asked.inputId(),
                ApprovalAnswer.of(ApprovalDecision.ALWAYS_ALLOW)));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.answer(ALICE, ticket.runId(), asked.inputId(),
                ApprovalAnswer.of(ApprovalDecision.ALLOW_FOR_THREAD)));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.answer(ALICE, ticket.runId(), asked.inputId(),
                new ApprovalAnswer(ApprovalDecision.ALLOW_ONCE, "{\"order\":9}")));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.answer(ALICE, ticket.runId(), asked.inputId(),
                new ClarifyAnswer(List.of("yes"))));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.answer(ALICE, ticket.runId(), asked.inputId(),
                new ClientToolAnswer("{}", false)));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.answer(ALICE, ticket.runId(), "no-such-input",
                ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE)));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.answer(MALLORY, ticket.runId(), asked.inputId(),
                ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE)));

        RunState state = engine.state(ALICE, ticket.runId());
        assertThat(state.lastSeq()).as("nothing was logged").isEqualTo(seqBefore);
        assertThat(state.pendingInputs()).extracting(PendingInput::inputId).containsExactly(asked.inputId());
        assertThat(store.findInput(ticket.runId(), asked.inputId()).orElseThrow().state()).isEqualTo(InputState.PENDING);
        assertThat(handled).isEmpty();
        engine.answer(ALICE, ticket.runId(), asked.inputId(), ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE));
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
    }

    @Test
    void allowingForTheThreadHoldsForItsLaterRunsAndNoOtherThread() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.callsHostAction("refund", "{\"order\":5}"));
        ChatEngine engine = engine(runtime, b -> b.hostAction(refund(HostActionApproval.oncePerThread(
                call -> "Refunds order 5"))));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = engine.startRun(ALICE, threadId, StartRun.of("refund it"));
        PendingInput asked = awaitPending(engine, first.runId(), InputKind.APPROVAL);
        assertThat(((ApprovalRequest) asked.request()).decisions()).containsExactly(ApprovalDecision.ALLOW_ONCE,
                ApprovalDecision.ALLOW_FOR_THREAD, ApprovalDecision.DENY);
        engine.answer(ALICE, first.runId(), asked.inputId(), ApprovalAnswer.of(ApprovalDecision.ALLOW_FOR_THREAD));
        awaitRun(engine, first.runId(), RunStatus.SUCCEEDED);

        RunTicket second = engine.startRun(ALICE, threadId, StartRun.of("and again"));
        Run again = awaitRun(engine, second.runId(), RunStatus.SUCCEEDED);
        assertThat(storedMessagesOf(again)).as("no approval asked in the same thread").noneMatch(ApprovalMessage.class::isInstance);
        assertThat(handled).hasSize(2);

        String otherThread = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket elsewhere = engine.startRun(ALICE, otherThread, StartRun.of("refund it"));
        awaitPending(engine, elsewhere.runId(), InputKind.APPROVAL);
        engine.cancel(ALICE, elsewhere.runId());
        awaitRun(engine, elsewhere.runId(), RunStatus.CANCELLED);
        assertThat(store.listPendingInputs(elsewhere.runId())).as("closed with its run").isEmpty();
    }

    @Test
    void anApprovalNobodyGivesInTimeExpiresAndTheCallFails() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.callsHostAction("refund", "{\"order\":3}"));
        ChatEngine engine = engine(runtime, b -> b.hostAction(refund(askEveryTime().withTimeout(Duration.ofMillis(300)))));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("refund it"));
        PendingInput asked = awaitPending(engine, ticket.runId(), InputKind.APPROVAL);
        assertThat(asked.deadline()).isNotNull();

        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(handled).isEmpty();
        assertThat(runtime.toolResults()).singleElement().satisfies(r ->
                assertThat(r.result()).isEqualTo("the call of refund was not approved in time"));
        ApprovalMessage recorded = approvalMessageOf(run);
        assertThat(recorded.status()).isEqualTo(MessageStatus.CANCELLED);
        assertThat(recorded.outcome()).isEqualTo(InputState.EXPIRED);
        assertThat(store.findInput(ticket.runId(), asked.inputId()).orElseThrow().state()).isEqualTo(InputState.EXPIRED);
        assertCode(ErrorCode.CONFLICT, () -> engine.answer(ALICE, ticket.runId(), asked.inputId(),
                ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE)));
    }

    // ------------------------------------------------------------------ tools the page runs

    /** Calls the client tool pick_date and answers with what it returned. */
    private static ScriptedRuntime.Script callsPickDate() {
        return (request, p) -> {
            assertThat(request.hostTools()).extracting(HostToolSpec::name).contains("pick_date");
            p.emit(new AgentStreamEvent.ToolCallStart(request.runId() + ":tool:1", "call-1", "pick_date", "{\"month\":3}"));
            p.emit(new AgentStreamEvent.ToolCallEnd("call-1"));
            ToolResult result = p.awaitToolResult("call-1");
            p.text((result.error() ? "The page failed: " : "The page said: ") + result.result());
            p.finish();
        };
    }

    @Test
    void aClientToolWaitsForThePageAndItsResultGoesBack() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(callsPickDate());
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("when?").withClientTools(List.of(PICK_DATE)));

        PendingInput asked = awaitPending(engine, ticket.runId(), InputKind.CLIENT_TOOL);
        ClientToolRequest call = (ClientToolRequest) asked.request();
        assertThat(call.toolName()).isEqualTo("pick_date");
        assertThat(call.arguments()).isEqualTo("{\"month\":3}");
        assertThat(call.parameters()).isEqualTo(PICK_DATE.parametersSchema());
        assertThat(asked.deadline()).as("the engine's client-tool timeout").isNotNull();
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.answer(ALICE, ticket.runId(), asked.inputId(),
                ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE)));

        engine.answer(ALICE, ticket.runId(), asked.inputId(), new ClientToolAnswer("{\"date\":\"2027-03-14\"}", false));
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(assistantText(run)).isEqualTo("The page said: {\"date\":\"2027-03-14\"}");
        List<Message> steps = storedMessagesOf(run);
        assertThat(steps).filteredOn(ResultMessage.class::isInstance).singleElement()
                .satisfies(m -> assertThat(((ResultMessage) m).result()).isEqualTo("{\"date\":\"2027-03-14\"}"));
    }

    @Test
    void aClientToolThatFailsOrNeverAnswersGoesBackAsAnError() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(callsPickDate());
        ChatEngine engine = engine(runtime, b -> b.limits(EngineLimits.defaults()
                .withCancelGracePeriod(Duration.ofMillis(300)).withClientToolTimeout(Duration.ofMillis(300))));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket failing = engine.startRun(ALICE, threadId, StartRun.of("when?").withClientTools(List.of(PICK_DATE)));
        PendingInput asked = awaitPending(engine, failing.runId(), InputKind.CLIENT_TOOL);
        engine.answer(ALICE, failing.runId(), asked.inputId(), new ClientToolAnswer("the calendar is closed", true));
        assertThat(assistantText(awaitRun(engine, failing.runId(), RunStatus.SUCCEEDED)))
                .isEqualTo("The page failed: the calendar is closed");

        RunTicket silent = engine.startRun(ALICE, threadId, StartRun.of("when?").withClientTools(List.of(PICK_DATE)));
        assertThat(assistantText(awaitRun(engine, silent.runId(), RunStatus.SUCCEEDED)))
                .isEqualTo("The page failed: tool pick_date did not answer in time");
    }

    @Test
    void malformedClientToolsAreRefusedBeforeAnythingIsStored() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("ok")), b -> b.hostAction(refund(
                HostActionApproval.never())));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        List<List<HostToolSpec>> bad = List.of(
                List.of(new HostToolSpec("has space", "", "{}")),
                List.of(PICK_DATE, PICK_DATE),
                List.of(new HostToolSpec("refund", "clashes with the host action", "{}")),
                List.of(new HostToolSpec("pick", "", "{not json")),
                List.of(new HostToolSpec("pick", "", "[1]")));
        for (List<HostToolSpec> tools : bad) {
            assertCode(ErrorCode.INVALID_INPUT, () -> engine.startRun(ALICE, threadId, StartRun.of("hi")
                    .withClientTools(tools)));
        }
        ChatEngine noTools = engine(ScriptedRuntime.playing(Scripts.instant("ok"))
                .withCapabilities(EnumSet.of(Capability.CLARIFY)));
        assertCode(ErrorCode.UNSUPPORTED, () -> noTools.startRun(ALICE, threadId, StartRun.of("hi")
                .withClientTools(List.of(PICK_DATE))));
        assertThat(store.findThreadRuns(threadId, EnumSet.allOf(RunStatus.class))).isEmpty();
        assertThat(store.listTopLevelMessages(threadId, null, 10)).isEmpty();
    }

    // ------------------------------------------------------------------ inputs the runtime asks for

    /** Asks its own approval (as Hermes does for a shell command), offering always-allow, then reports it. */
    private static ScriptedRuntime.Script asksItsOwnApproval() {
        return (request, p) -> {
            p.emit(new AgentStreamEvent.InputRequested(request.runId() + ":approval", "cmd-1", new ApprovalRequest(
                    "terminal", "{\"command\":\"rm -rf /tmp/x\"}", "Deletes /tmp/x (dangerous: recursive delete)",
                    List.of(ApprovalDecision.ALLOW_FOR_THREAD, ApprovalDecision.ALWAYS_ALLOW), false), null, "tok-1"));
            ApprovalReply reply = p.awaitDecision("cmd-1");
            p.text("decided " + reply.decision().wireName());
            p.finish();
        };
    }

    @Test
    void anApprovalTheRuntimeAsksGoesToTheRuntime() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(asksItsOwnApproval());
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("clean up"));
        PendingInput asked = awaitPending(engine, ticket.runId(), InputKind.APPROVAL);
        assertThat(asked.resumeToken()).isEqualTo("tok-1");

        engine.answer(ALICE, ticket.runId(), "cmd-1", ApprovalAnswer.of(ApprovalDecision.ALWAYS_ALLOW));
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(runtime.decisions()).containsExactly(new ApprovalReply(ticket.runId(), "cmd-1",
                ApprovalDecision.ALWAYS_ALLOW, null));
        assertThat(assistantText(run)).isEqualTo("decided always_allow");
    }

    @Test
    void aRuntimeThatCannotTakeDecisionsRefusesTheAnswerAndTheApprovalStaysPending() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(asksItsOwnApproval())
                .withCapabilities(EnumSet.of(Capability.CANCEL, Capability.CLARIFY));
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("clean up"));
        awaitPending(engine, ticket.runId(), InputKind.APPROVAL);

        assertCode(ErrorCode.UNSUPPORTED, () -> engine.answer(ALICE, ticket.runId(), "cmd-1",
                ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE)));
        assertThat(store.findInput(ticket.runId(), "cmd-1").orElseThrow().state()).isEqualTo(InputState.PENDING);
        engine.cancel(ALICE, ticket.runId());
    }

    /** Asks a question that expires; told so, answers without it. */
    private static ScriptedRuntime.Script asksWithADeadline() {
        return (request, p) -> {
            p.emit(new AgentStreamEvent.InputRequested(request.runId() + ":clarify", "ask-1", new ClarifyRequest(
                    "Which city?", List.of("Paris"), false), Instant.now().plusMillis(200), null));
            p.awaitExpiry("ask-1");
            p.text("No answer; I picked Paris.");
            p.finish();
        };
    }

    @Test
    void aQuestionThatExpiresIsToldToTheRuntimeWhichGoesOn() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(asksWithADeadline()).takingExpiries();
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("plan"));
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(runtime.expiries()).containsExactly(ticket.runId() + "/ask-1");
        assertThat(assistantText(run)).isEqualTo("No answer; I picked Paris.");
        assertThat(store.findInput(ticket.runId(), "ask-1").orElseThrow().state()).isEqualTo(InputState.EXPIRED);
        assertThat(store.readEvents(ticket.runId(), 0, 100)).extracting(e -> e.event())
                .contains(new AgentStreamEvent.InputResolved("ask-1", AgentStreamEvent.InputOutcome.EXPIRED, null));
    }

    @Test
    void aQuestionThatExpiresEndsTheRunWhenTheRuntimeCannotBeTold() {
        ChatEngine engine = engine(ScriptedRuntime.playing(asksWithADeadline()));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("plan"));
        awaitRun(engine, ticket.runId(), RunStatus.CANCELLED);
        List<dev.parley.chat.event.RunEvent> events = store.readEvents(ticket.runId(), 0, 100);
        assertThat(events.get(events.size() - 1).event()).isInstanceOfSatisfying(AgentStreamEvent.RunFinished.class,
                end -> assertThat(end.reason()).contains("ask-1 expired"));
        assertCode(ErrorCode.CONFLICT, () -> engine.answer(ALICE, ticket.runId(), "ask-1", List.of("Paris")));
    }

    @Test
    void whileAQuestionIsBeingStoredTheStateShowsNeitherItsSeqNorTheQuestion() throws Exception {
        CountDownLatch storing = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        ChatStore real = store;
        store = InterceptedStore.of(real, (method, args, proceed) -> {
            if (method.equals("write") && !((StoreBatch) args[0]).inputs().isEmpty() && storing.getCount() > 0) {
                storing.countDown();
                assertThat(release.await(30, TimeUnit.SECONDS)).isTrue();
            }
            return proceed.call();
        });
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Paris", "Rome"))));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("plan"));
        assertThat(storing.await(10, TimeUnit.SECONDS)).as("the question's flush to start").isTrue();

        RunState whileStoring = engine.state(ALICE, ticket.runId());
        release.countDown();
        awaitPending(engine, ticket.runId(), InputKind.CLARIFY);
        long questionSeq = real.readEvents(ticket.runId(), 0, 100).stream()
                .filter(e -> e.event() instanceof AgentStreamEvent.InputRequested).mapToLong(e -> e.seq()).findFirst()
                .orElseThrow();
        assertThat(whileStoring.pendingInputs()).as("the question is not visible before it is stored").isEmpty();
        assertThat(whileStoring.lastSeq()).as("nor is its seq: a caller subscribing after it would miss the question")
                .isLessThan(questionSeq);
        assertThat(engine.state(ALICE, ticket.runId()).lastSeq()).isGreaterThanOrEqualTo(questionSeq);
        assertThat(engine.answer(ALICE, ticket.runId(), "ask-1", List.of("Rome"))).isEqualTo(AnswerResult.ACCEPTED);
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
    }

    @Test
    void aStateThatShowsAQuestionAlsoShowsTheRunWaitingForIt() throws Exception {
        for (int attempt = 0; attempt < 30; attempt++) {
            CountDownLatch storing = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            ChatStore real = store;
            store = InterceptedStore.of(real, (method, args, proceed) -> {
                if (method.equals("write") && !((StoreBatch) args[0]).inputs().isEmpty() && storing.getCount() > 0) {
                    storing.countDown();
                    assertThat(release.await(30, TimeUnit.SECONDS)).isTrue();
                }
                return proceed.call();
            });
            ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Paris"))));
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("plan"));
            assertThat(storing.await(10, TimeUnit.SECONDS)).as("the question's flush to start").isTrue();

            release.countDown();
            RunState seen;
            do {
                seen = engine.state(ALICE, ticket.runId());
                if (!seen.pendingInputs().isEmpty()) {
                    assertThat(seen.run().status()).as("attempt " + attempt).isEqualTo(RunStatus.WAITING_FOR_INPUT);
                }
            } while (seen.pendingInputs().isEmpty());
            engine.answer(ALICE, ticket.runId(), "ask-1", List.of("Paris"));
            awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
            store = real;
        }
    }

    @Test
    void theOlderClarifyCallStillAnswersAQuestionAskedTheOlderWay() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Paris", "Rome")));
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("plan"));
        PendingInput asked = awaitPending(engine, ticket.runId(), InputKind.CLARIFY);
        assertThat(asked.inputId()).isEqualTo("ask-1");
        assertThat(engine.state(ALICE, ticket.runId()).pendingInputs()).extracting(PendingInput::inputId)
                .containsExactly("ask-1");
        assertThat(engine.answer(ALICE, ticket.runId(), "ask-1", List.of("Rome"))).isEqualTo(AnswerResult.ACCEPTED);
        assertThat(engine.answer(ALICE, ticket.runId(), "ask-1", new ClarifyAnswer(List.of("Rome"))))
                .as("the same answer through the new call").isEqualTo(AnswerResult.REPLAYED);
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(store.readEvents(ticket.runId(), 0, 100)).extracting(e -> e.event().type())
                .contains("input_requested", "input_resolved").doesNotContain("clarify_request", "clarify_resolved");
    }

    /**
     * A deadline that passes while an accepted answer is being delivered still holds: the delivery fails, the
     * answer is taken back, and the input expires (it used to stay pending for good, its timer dropped).
     */
    @Test
    void aDeadlineThatPassesWhileTheAnswerIsDeliveredStillExpiresTheInputIfTheDeliveryFails() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(asksWithADeadline()).takingExpiries()
                .withFailingAnswers(Duration.ofMillis(600));
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("plan"));
        awaitPending(engine, ticket.runId(), InputKind.CLARIFY);

        assertCode(ErrorCode.RUNTIME_UNAVAILABLE, () -> engine.answer(ALICE, ticket.runId(), "ask-1", List.of("Paris")));
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(runtime.expiries()).containsExactly(ticket.runId() + "/ask-1");
        assertThat(assistantText(run)).isEqualTo("No answer; I picked Paris.");
        assertThat(store.findInput(ticket.runId(), "ask-1").orElseThrow().state()).isEqualTo(InputState.EXPIRED);
    }

    /**
     * An answer that races the run's end (accepted by the store, then the run ends before it is delivered)
     * leaves the input CANCELLED, not pending on a finished run.
     */
    @Test
    void anAnswerRacingTheRunsEndLeavesTheInputCancelled() {
        ChatStore real = store;
        java.util.concurrent.atomic.AtomicReference<ChatEngine> engineRef = new java.util.concurrent.atomic.AtomicReference<>();
        store = InterceptedStore.of(real, (method, args, proceed) -> {
            Object outcome = proceed.call();
            if (method.equals("answerInput")) {
                String runId = (String) args[0];
                engineRef.get().cancel(ALICE, runId);
                await(() -> engineRef.get().state(ALICE, runId).run().status(), RunStatus::isTerminal,
                        "the run to end while the answer is on its way");
            }
            return outcome;
        });
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Paris", "Rome"))));
        engineRef.set(engine);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("plan"));
        awaitPending(engine, ticket.runId(), InputKind.CLARIFY);

        assertCode(ErrorCode.CONFLICT, () -> engine.answer(ALICE, ticket.runId(), "ask-1", List.of("Rome")));
        assertThat(engine.state(ALICE, ticket.runId()).run().status()).isEqualTo(RunStatus.CANCELLED);
        assertThat(real.findInput(ticket.runId(), "ask-1").orElseThrow().state()).isEqualTo(InputState.CANCELLED);
        assertThat(engine.state(ALICE, ticket.runId()).pendingInputs()).isEmpty();
    }

    /**
     * Two identical answers at once: the second caller must not be told REPLAYED while the first one's
     * delivery is still on its way, since that delivery may fail (here it does: neither answer got through,
     * and both callers hear so).
     */
    @Test
    void twoIdenticalAnswersAtOnceAreBothToldWhenTheDeliveryFails() throws Exception {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Paris", "Rome")))
                .withFailingAnswers(Duration.ofMillis(300));
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("plan"));
        awaitPending(engine, ticket.runId(), InputKind.CLARIFY);

        List<Object> outcomes = dev.parley.chat.testing.Await.race(2, i -> {
            try {
                return engine.answer(ALICE, ticket.runId(), "ask-1", List.of("Rome"));
            } catch (dev.parley.chat.ChatException e) {
                return e.code();
            }
        });
        assertThat(outcomes).containsExactly(ErrorCode.RUNTIME_UNAVAILABLE, ErrorCode.RUNTIME_UNAVAILABLE);
        assertThat(store.findInput(ticket.runId(), "ask-1").orElseThrow().state()).isEqualTo(InputState.PENDING);
        engine.cancel(ALICE, ticket.runId());
    }
}
