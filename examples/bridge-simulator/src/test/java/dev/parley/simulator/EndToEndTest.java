package dev.parley.simulator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.engine.AnswerResult;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.ApprovalMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ClarifyMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.StatusMessage;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.TodoItem;
import dev.parley.chat.model.TodoMessage;
import dev.parley.chat.model.TodoStatus;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.EventCollector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** ChatEngine + HermesRuntimeAdapter + the simulator, over real HTTP on loopback. */
class EndToEndTest {
    private static final String ALICE = "alice";
    private static final String TOKEN = "bridge-token-0123456789";

    private final ChatStore store = new InMemoryChatStore();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @AfterEach
    void closeAll() throws Exception {
        for (int i = closeables.size() - 1; i >= 0; i--) {
            closeables.get(i).close();
        }
    }

    private BridgeSimulator simulator(Consumer<SimulatorConfig.Builder> config) throws Exception {
        SimulatorConfig.Builder builder = SimulatorConfig.builder().bearerToken(TOKEN).heartbeatInterval(Duration.ofSeconds(1));
        config.accept(builder);
        BridgeSimulator simulator = BridgeSimulator.start(builder.build());
        closeables.add(simulator);
        return simulator;
    }

    private HermesRuntimeAdapter adapter(BridgeSimulator simulator) {
        HermesRuntimeAdapter adapter = new HermesRuntimeAdapter(HermesConfig.builder().baseUrl(simulator.baseUrl())
                .bearerToken(TOKEN).idleTimeout(Duration.ofSeconds(5)).reattachBackoff(Duration.ofMillis(50)).build());
        closeables.add(adapter);
        return adapter;
    }

    private ChatEngine engine(HermesRuntimeAdapter adapter, Consumer<ChatEngine.Builder> config) {
        ChatEngine.Builder builder = ChatEngine.builder().runtime(adapter).store(store)
                .limits(EngineLimits.defaults().withCancelGracePeriod(Duration.ofSeconds(3)));
        config.accept(builder);
        ChatEngine engine = builder.build();
        closeables.add(engine);
        return engine;
    }

    private ChatEngine engine(BridgeSimulator simulator) {
        return engine(adapter(simulator), b -> { });
    }

    @Test
    void aPlainRunStreamsThinkingAndAMarkdownAnswerAndKeepsTheSession() throws Exception {
        BridgeSimulator simulator = simulator(b -> { });
        ChatEngine engine = engine(simulator);
        String thread = engine.createThread(ALICE, NewThread.empty()).id();

        RunTicket first = engine.startRun(ALICE, thread, StartRun.of("Hello simulator"));
        Run run = awaitRun(engine, first.runId(), RunStatus.SUCCEEDED);

        AssistantMessage answer = (AssistantMessage) message(first.assistantMessageId());
        assertThat(answer.status()).isEqualTo(MessageStatus.COMPLETED);
        assertThat(answer.text()).startsWith("### Simulated answer").contains("> Hello simulator");
        assertThat(run.usage()).isNotNull();
        assertThat(steps(run, ThinkingMessage.class)).singleElement()
                .satisfies(t -> assertThat(t.text()).contains("A short Markdown answer will do."));
        String session = store.findThread(thread).orElseThrow().runtimeSessionId();
        assertThat(session).startsWith("hs-");

        RunTicket second = startWhenFree(engine, thread, "And again");
        awaitRun(engine, second.runId(), RunStatus.SUCCEEDED);
        assertThat(simulator.request(second.runId()).orElseThrow().sessionId()).isEqualTo(session);
        assertThat(events(engine, second.runId())).contains(new AgentStreamEvent.RuntimeSession(session, true));
    }

    @Test
    void aToolRunKeepsCallsResultsTodosAndSeparateThinking() throws Exception {
        ChatEngine engine = engine(simulator(b -> { }));
        String thread = engine.createThread(ALICE, NewThread.empty()).id();

        RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("please use the tools"));
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        List<ActionExecutionMessage> calls = steps(run, ActionExecutionMessage.class);
        assertThat(calls).extracting(ActionExecutionMessage::name).containsExactly("web_search", "read_file");
        assertThat(calls).allMatch(c -> c.status() == MessageStatus.COMPLETED);
        assertThat(calls.get(1).arguments()).isEqualTo("{\"path\":\"docs/guide.md\"}");
        List<ResultMessage> results = steps(run, ResultMessage.class);
        assertThat(results).extracting(ResultMessage::name).containsExactly("web_search", "read_file");
        assertThat(results.get(1).result()).startsWith("# Guide (simulated)");
        TodoMessage todos = steps(run, TodoMessage.class).get(0);
        assertThat(todos.items()).extracting(TodoItem::status).containsOnly(TodoStatus.COMPLETED);
        assertThat(todos.items()).extracting(TodoItem::content)
                .containsExactly("Search the docs", "Read the best result", "Write the answer");
        assertThat(steps(run, ThinkingMessage.class)).hasSize(2);
        assertThat(((AssistantMessage) message(ticket.assistantMessageId())).text()).startsWith("Based on **the guide**");
    }

    @Test
    void aClarifyIsAnsweredThroughTheEngine() throws Exception {
        ChatEngine engine = engine(simulator(b -> { }));
        String thread = engine.createThread(ALICE, NewThread.empty()).id();

        RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("clarify first"));
        awaitRun(engine, ticket.runId(), RunStatus.WAITING_FOR_INPUT);
        PendingInput question = engine.state(ALICE, ticket.runId()).pendingInputs().get(0);
        String c1 = question.inputId();
        assertThat(c1).startsWith("c-");
        assertThat(((ClarifyRequest) question.request()).choices()).containsExactly("Markdown", "Plain text", "A table");

        assertThat(engine.answer(ALICE, ticket.runId(), c1, List.of("A table"))).isEqualTo(AnswerResult.ACCEPTED);
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        assertThat(engine.answer(ALICE, ticket.runId(), c1, List.of("A table"))).isEqualTo(AnswerResult.REPLAYED);
        assertThat(((AssistantMessage) message(ticket.assistantMessageId())).text()).startsWith("You chose **A table**");
        ClarifyMessage answered = steps(run, ClarifyMessage.class).get(0);
        assertThat(answered.status()).isEqualTo(MessageStatus.COMPLETED);
        assertThat(answered.answer()).containsExactly("A table");
    }

    @Test
    void aCancelThroughTheEngineStopsTheBridgeRunAndKeepsThePartialAnswer() throws Exception {
        BridgeSimulator simulator = simulator(b -> b.slowEventsPerSecond(40));
        ChatEngine engine = engine(simulator);
        String thread = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("go slow"));
        EventCollector live = EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, ticket.runId(), 0));
        await(() -> live.events().stream().filter(e -> e.event() instanceof AgentStreamEvent.TextDelta).count(),
                n -> n >= 5, "some answer text");

        engine.cancel(ALICE, ticket.runId());
        Run run = awaitRun(engine, ticket.runId(), RunStatus.CANCELLED);

        live.awaitDone();
        assertThat(live.events()).last().extracting(RunEvent::event)
                .isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "cancelled"));
        AssistantMessage answer = (AssistantMessage) message(ticket.assistantMessageId());
        assertThat(answer.status()).isEqualTo(MessageStatus.CANCELLED);
        assertThat(answer.text()).startsWith("### Simulated answer").doesNotContain("every word is scripted");
        assertThat(simulator.runStatus(run.id())).contains("cancelled");
    }

    @Test
    void aDroppedStreamIsReattachedWithoutLosingOrRepeatingAToken() throws Exception {
        BridgeSimulator simulator = simulator(b -> b.dropAfterFrames(12).eventsPerSecond(400));
        ChatEngine engine = engine(simulator);
        String thread = engine.createThread(ALICE, NewThread.empty()).id();

        RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("drop the line"));
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        assertThat(simulator.streamsOpened(ticket.runId())).isEqualTo(2);
        List<AgentStreamEvent> events = events(engine, ticket.runId());
        String streamed = events.stream().filter(e -> e instanceof AgentStreamEvent.TextDelta)
                .map(e -> ((AgentStreamEvent.TextDelta) e).delta()).collect(Collectors.joining());
        String whole = events.stream().filter(e -> e instanceof AgentStreamEvent.TextFinal)
                .map(e -> ((AgentStreamEvent.TextFinal) e).text()).findFirst().orElseThrow();
        assertThat(streamed).isEqualTo(whole);
        assertThat(events.stream().filter(e -> e instanceof AgentStreamEvent.ThinkingDelta)
                .map(e -> ((AgentStreamEvent.ThinkingDelta) e).delta()).collect(Collectors.joining()))
                .isEqualTo("The person wrote 13 characters. A short Markdown answer will do.");
    }

    @Test
    void aRestartedHostReattachesToARunWaitingForAnAnswer() throws Exception {
        BridgeSimulator simulator = simulator(b -> { });
        HermesRuntimeAdapter firstAdapter = adapter(simulator);
        ChatEngine first = engine(firstAdapter, b -> { });
        String thread = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = first.startRun(ALICE, thread, StartRun.of("clarify after a restart"));
        awaitRun(first, ticket.runId(), RunStatus.WAITING_FOR_INPUT);

        first.close();
        firstAdapter.close();
        ChatEngine second = engine(adapter(simulator), b -> { });

        assertThat(second.state(ALICE, ticket.runId()).run().status()).isEqualTo(RunStatus.WAITING_FOR_INPUT);
        await(() -> simulator.streamsOpened(ticket.runId()), n -> n == 2, "the re-attachment");
        String c1 = second.state(ALICE, ticket.runId()).pendingInputs().get(0).inputId();
        assertThat(second.answer(ALICE, ticket.runId(), c1, List.of("Markdown"))).isEqualTo(AnswerResult.ACCEPTED);
        awaitRun(second, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(((AssistantMessage) message(ticket.assistantMessageId())).text()).startsWith("You chose **Markdown**");
    }

    /**
     * The host restarts while a run streams: the Bridge carries on, the new host re-attaches from where the
     * store left the run and follows it to its end. Every token is in the run's log once, and the answer the
     * thread shows is the Bridge's whole answer (the one its session, and the next turn, build on).
     */
    @Test
    void aRestartedHostFollowsAStreamingRunToItsEndWithEveryTokenOnce() throws Exception {
        BridgeSimulator simulator = simulator(b -> b.slowEventsPerSecond(60));
        HermesRuntimeAdapter firstAdapter = adapter(simulator);
        ChatEngine first = engine(firstAdapter, b -> { });
        String thread = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = first.startRun(ALICE, thread, StartRun.of("slow please"));
        EventCollector.unbounded().subscribeTo(first.subscribe(ALICE, ticket.runId(), 0)).awaitCount(15);

        first.close();
        firstAdapter.close();
        assertThat(store.findRun(ticket.runId()).orElseThrow().status()).as("left for the next host")
                .isEqualTo(RunStatus.RUNNING);
        ChatEngine second = engine(adapter(simulator), b -> { });

        awaitRun(second, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(simulator.streamsOpened(ticket.runId())).isEqualTo(2);
        assertThat(simulator.runStatus(ticket.runId())).contains("completed");
        List<AgentStreamEvent> events = events(second, ticket.runId());
        String streamed = events.stream().filter(e -> e instanceof AgentStreamEvent.TextDelta)
                .map(e -> ((AgentStreamEvent.TextDelta) e).delta()).collect(Collectors.joining());
        String whole = events.stream().filter(e -> e instanceof AgentStreamEvent.TextFinal)
                .map(e -> ((AgentStreamEvent.TextFinal) e).text()).findFirst().orElseThrow();
        assertThat(streamed).isEqualTo(whole);
        assertThat(events.stream().filter(AgentStreamEvent::isTerminal)).hasSize(1);
        assertThat(((AssistantMessage) message(ticket.assistantMessageId())).text()).isEqualTo(whole);
    }

    @Test
    void aHostToolIsCalledThroughTheEngineAndItsResultGoesBack() throws Exception {
        BridgeSimulator simulator = simulator(b -> { });
        HostAction lookup = new HostAction(new HostToolSpec("lookup_order", "Looks an order up", "{\"type\":\"object\"}"),
                call -> "order 7 shipped");
        ChatEngine engine = engine(adapter(simulator), b -> b.hostAction(lookup));
        String thread = engine.createThread(ALICE, NewThread.empty()).id();

        RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("use the host tool"));
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        assertThat(simulator.request(run.id()).orElseThrow().hostTools()).containsExactly("lookup_order");
        assertThat(steps(run, ResultMessage.class)).singleElement()
                .satisfies(r -> assertThat(r.result()).isEqualTo("order 7 shipped"));
        assertThat(((AssistantMessage) message(ticket.assistantMessageId())).text())
                .isEqualTo("The host tool **lookup_order** answered: order 7 shipped");
    }

    @Test
    void aForgottenSessionIsStartedAgainWithTheConversation() throws Exception {
        BridgeSimulator simulator = simulator(b -> b.strictSessions(true));
        ChatEngine engine = engine(simulator);
        String thread = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = engine.startRun(ALICE, thread, StartRun.of("hi"));
        awaitRun(engine, first.runId(), RunStatus.SUCCEEDED);
        String before = store.findThread(thread).orElseThrow().runtimeSessionId();

        simulator.forgetSessions();
        RunTicket second = startWhenFree(engine, thread, "still there?");
        Run run = awaitRun(engine, second.runId(), RunStatus.SUCCEEDED);

        // the strict Bridge's 410 makes the adapter send the thread's conversation along (the history addition),
        // so no context is lost and no warning is due
        assertThat(simulator.request(second.runId()).orElseThrow().historyEntries()).isEqualTo(2);
        assertThat(steps(run, StatusMessage.class)).noneSatisfy(s -> assertThat(s.text()).contains("new session"));
        assertThat(store.findThread(thread).orElseThrow().runtimeSessionId()).isNotEqualTo(before).startsWith("hs-");
    }

    @Test
    void aFailingRunKeepsItsPartialAnswer() throws Exception {
        ChatEngine engine = engine(simulator(b -> { }));
        String thread = engine.createThread(ALICE, NewThread.empty()).id();

        RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("fail please"));
        Run run = awaitRun(engine, ticket.runId(), RunStatus.FAILED);

        assertThat(run.error().code()).isEqualTo("AGENT_ERROR");
        AssistantMessage answer = (AssistantMessage) message(ticket.assistantMessageId());
        assertThat(answer.text()).isEqualTo("Let me look that up ");
        assertThat(answer.status()).isEqualTo(MessageStatus.FAILED);
    }

    // ------------------------------------------------------------------ approvals

    @Test
    void anApprovalAllowedOnceRunsTheCommandAndTheDecisionIsTakenOnce() throws Exception {
        ChatEngine engine = engine(simulator(b -> { }));
        String thread = engine.createThread(ALICE, NewThread.empty()).id();

        RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("please approve the cleanup"));
        PendingInput asked = awaitApproval(engine, ticket.runId());
        assertThat(engine.state(ALICE, ticket.runId()).run().status()).isEqualTo(RunStatus.WAITING_FOR_INPUT);
        ApprovalRequest request = (ApprovalRequest) asked.request();
        String a1 = asked.inputId();
        assertThat(a1).startsWith("a-");
        assertThat(request.toolName()).isEqualTo("terminal");
        assertThat(request.arguments()).isEqualTo("{\"command\":\"rm -rf ./build/tmp-sim\"}");
        assertThat(request.description()).isEqualTo("recursive delete (simulated)");
        assertThat(request.decisions()).containsExactly(ApprovalDecision.ALLOW_ONCE, ApprovalDecision.ALLOW_FOR_THREAD,
                ApprovalDecision.ALWAYS_ALLOW, ApprovalDecision.DENY);
        assertThat(asked.deadline()).as("the Bridge's expiresAt").isNotNull();

        ApprovalAnswer once = ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE);
        assertThat(engine.answer(ALICE, ticket.runId(), a1, once)).isEqualTo(AnswerResult.ACCEPTED);
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        assertThat(engine.answer(ALICE, ticket.runId(), a1, once)).isEqualTo(AnswerResult.REPLAYED);
        assertThatThrownBy(() -> engine.answer(ALICE, ticket.runId(), a1, ApprovalAnswer.of(ApprovalDecision.DENY)))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT));
        assertThat(((AssistantMessage) message(ticket.assistantMessageId())).text()).startsWith("I ran `rm -rf");
        ApprovalMessage decided = steps(run, ApprovalMessage.class).get(0);
        assertThat(decided.outcome()).isEqualTo(InputState.ANSWERED);
        assertThat(decided.decision()).isEqualTo(ApprovalDecision.ALLOW_ONCE);
        assertThat(steps(run, ResultMessage.class)).singleElement().satisfies(r -> assertThat(r.error()).isFalse());

        RunTicket again = startWhenFree(engine, thread, "approve it again");
        awaitApproval(engine, again.runId());
        engine.cancel(ALICE, again.runId());
        awaitRun(engine, again.runId(), RunStatus.CANCELLED);
    }

    @Test
    void aDeniedApprovalLeavesTheCommandUnrunAndTheAgentGoesOn() throws Exception {
        ChatEngine engine = engine(simulator(b -> { }));
        String thread = engine.createThread(ALICE, NewThread.empty()).id();

        Run run = decided(engine, thread, ApprovalDecision.DENY);

        assertThat(((AssistantMessage) message(run.assistantMessageId())).text()).startsWith("You denied");
        assertThat(steps(run, ApprovalMessage.class).get(0).decision()).isEqualTo(ApprovalDecision.DENY);
        assertThat(steps(run, ResultMessage.class)).singleElement().satisfies(r -> {
            assertThat(r.error()).isTrue();
            assertThat(r.result()).startsWith("BLOCKED: the person denied");
        });
    }

    @Test
    void anApprovalForTheThreadIsNotAskedAgainInItButInAnotherThread() throws Exception {
        ChatEngine engine = engine(simulator(b -> { }));
        String thread = engine.createThread(ALICE, NewThread.empty()).id();
        decided(engine, thread, ApprovalDecision.ALLOW_FOR_THREAD);

        RunTicket second = startWhenFree(engine, thread, "approve the cleanup once more");
        Run run = awaitRun(engine, second.runId(), RunStatus.SUCCEEDED);

        assertThat(steps(run, ApprovalMessage.class)).as("not asked again in the same thread").isEmpty();
        assertThat(((AssistantMessage) message(second.assistantMessageId())).text()).contains("approved earlier");
        String otherThread = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket elsewhere = engine.startRun(ALICE, otherThread, StartRun.of("please approve the cleanup"));
        awaitApproval(engine, elsewhere.runId());
        engine.cancel(ALICE, elsewhere.runId());
        Run cancelled = awaitRun(engine, elsewhere.runId(), RunStatus.CANCELLED);
        assertThat(steps(cancelled, ApprovalMessage.class).get(0).outcome()).isEqualTo(InputState.CANCELLED);
    }

    @Test
    void anApprovalNobodyGivesExpiresOnTheBridgeAndTheAgentGoesOn() throws Exception {
        ChatEngine engine = engine(simulator(b -> b.approvalTimeout(Duration.ofMillis(300))));
        String thread = engine.createThread(ALICE, NewThread.empty()).id();

        RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("please approve the cleanup"));
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        assertThat(((AssistantMessage) message(ticket.assistantMessageId())).text()).startsWith("Nobody approved");
        assertThat(steps(run, ApprovalMessage.class).get(0).outcome()).isEqualTo(InputState.EXPIRED);
        String a1 = approvalAsked(engine, ticket.runId());
        assertThat(store.findInput(ticket.runId(), a1).orElseThrow().state()).isEqualTo(InputState.EXPIRED);
        assertThat(events(engine, ticket.runId())).contains(new AgentStreamEvent.InputResolved(a1,
                AgentStreamEvent.InputOutcome.EXPIRED, null));
        assertThatThrownBy(() -> engine.answer(ALICE, ticket.runId(), a1, ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE)))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFLICT));
    }

    @Test
    void theHostsDeadlineEndsTheBridgesWaitWhenTheBridgeClockLags() throws Exception {
        BridgeSimulator simulator = simulator(b -> b.approvalTimeout(Duration.ofMillis(300))
                .approvalTimerLag(Duration.ofSeconds(60)));
        ChatEngine engine = engine(simulator);
        String thread = engine.createThread(ALICE, NewThread.empty()).id();

        RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("please approve the cleanup"));
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        assertThat(((AssistantMessage) message(ticket.assistantMessageId())).text()).startsWith("Nobody approved");
        assertThat(events(engine, ticket.runId())).as("logged once, by the engine")
                .filteredOn(AgentStreamEvent.InputResolved.class::isInstance)
                .containsExactly(new AgentStreamEvent.InputResolved(approvalAsked(engine, ticket.runId()),
                        AgentStreamEvent.InputOutcome.EXPIRED, null));
    }

    @Test
    void aRestartedHostReattachesToARunWaitingForAnApproval() throws Exception {
        BridgeSimulator simulator = simulator(b -> b.approvalTimeout(Duration.ofSeconds(60)));
        HermesRuntimeAdapter firstAdapter = adapter(simulator);
        ChatEngine first = engine(firstAdapter, b -> { });
        String thread = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = first.startRun(ALICE, thread, StartRun.of("approve after a restart"));
        awaitApproval(first, ticket.runId());

        first.close();
        firstAdapter.close();
        ChatEngine second = engine(adapter(simulator), b -> { });

        PendingInput stillAsked = awaitApproval(second, ticket.runId());
        assertThat(stillAsked.resumeToken()).isNotNull();
        await(() -> simulator.streamsOpened(ticket.runId()), n -> n == 2, "the re-attachment");
        assertThat(second.answer(ALICE, ticket.runId(), stillAsked.inputId(), ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE)))
                .isEqualTo(AnswerResult.ACCEPTED);
        awaitRun(second, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(((AssistantMessage) message(ticket.assistantMessageId())).text()).startsWith("I ran `rm -rf");
    }

    @Test
    void deletingAThreadThroughTheEngineMakesTheBridgeForgetIt() throws Exception {
        BridgeSimulator simulator = simulator(b -> { });
        ChatEngine engine = engine(simulator);
        String thread = engine.createThread(ALICE, NewThread.empty()).id();
        Run first = decided(engine, thread, ApprovalDecision.ALLOW_FOR_THREAD);
        String key = simulator.request(first.id()).orElseThrow().threadId();
        assertThat(key).as("the conversation key the adapter sent").startsWith(thread + "@");

        awaitRun(engine, first.id(), RunStatus.SUCCEEDED);
        await(() -> {
            try {
                engine.deleteThread(ALICE, thread);
                return true;
            } catch (ChatException e) {
                if (e.code() != ErrorCode.CONFLICT) {
                    throw e;
                }
                return false;
            }
        }, Boolean::booleanValue, "the thread to be deleted");

        assertThat(simulator.runStatus(first.id())).as("the Bridge forgot the thread's run").isEmpty();
        assertThat(simulator.request(first.id())).isEmpty();
    }

    // ------------------------------------------------------------------ helpers

    /** Runs the approve scenario on the thread, takes {@code decision} on its approval, and waits for the run's end. */
    private static Run decided(ChatEngine engine, String thread, ApprovalDecision decision) {
        RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("please approve the cleanup"));
        String approvalId = awaitApproval(engine, ticket.runId()).inputId();
        assertThat(engine.answer(ALICE, ticket.runId(), approvalId, ApprovalAnswer.of(decision)))
                .isEqualTo(AnswerResult.ACCEPTED);
        return awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
    }

    /** The input id of the (first) approval the run asked, from its events. */
    private static String approvalAsked(ChatEngine engine, String runId) {
        return events(engine, runId).stream().filter(AgentStreamEvent.InputRequested.class::isInstance)
                .map(e -> ((AgentStreamEvent.InputRequested) e).inputId()).findFirst().orElseThrow();
    }

    private static PendingInput awaitApproval(ChatEngine engine, String runId) {
        return await(() -> engine.state(ALICE, runId).pendingInputs(), inputs -> inputs.stream()
                .anyMatch(i -> i.kind() == InputKind.APPROVAL), "an approval").stream()
                .filter(i -> i.kind() == InputKind.APPROVAL).findFirst().orElseThrow();
    }

    /**
     * Starts a run on a thread whose last run just ended. The engine reports a run's end a moment before it
     * frees the thread for the next one (a CONFLICT in between), so this tries again until it is free.
     */
    private static RunTicket startWhenFree(ChatEngine engine, String thread, String message) {
        return await(() -> {
            try {
                return engine.startRun(ALICE, thread, StartRun.of(message));
            } catch (ChatException e) {
                if (e.code() != ErrorCode.CONFLICT) {
                    throw e;
                }
                return null;
            }
        }, Objects::nonNull, "the thread to take another run");
    }

    private Message message(String id) {
        return store.findMessage(id).orElseThrow();
    }

    private <T extends Message> List<T> steps(Run run, Class<T> type) {
        return store.listStepMessagesAfter(run.id(), null, 1_000).stream().filter(type::isInstance).map(type::cast).toList();
    }

    private static List<AgentStreamEvent> events(ChatEngine engine, String runId) {
        return EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, runId, 0)).awaitDone().events().stream()
                .map(RunEvent::event).toList();
    }

    private static Run awaitRun(ChatEngine engine, String runId, RunStatus status) {
        return await(() -> engine.state(ALICE, runId).run(), r -> r.status() == status, "run to be " + status);
    }

    private static <T> T await(Supplier<T> probe, Predicate<T> condition, String what) {
        return Await.until(probe, condition, what);
    }
}
