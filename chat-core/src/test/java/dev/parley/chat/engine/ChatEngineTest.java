package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.ClarifyMessage;
import dev.parley.chat.model.FeedbackRating;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageKind;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.TodoMessage;
import dev.parley.chat.model.TodoStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.testing.EventCollector;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import dev.parley.chat.testing.SteppingClock;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class ChatEngineTest extends EngineTestSupport {

    private static void assertContiguous(List<RunEvent> events, long afterSeq) {
        long expected = afterSeq + 1;
        for (RunEvent event : events) {
            assertThat(event.seq()).as("no gap, no duplicate").isEqualTo(expected++);
        }
    }

    // ------------------------------------------------------------------ a run end to end

    @Test
    void aRunStreamsIsStoredAndReplaysFromTheStoreAlone() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.answer("Hello there, friend.")));
        ChatThread thread = engine.createThread(ALICE, NewThread.empty());
        RunTicket ticket = engine.startRun(ALICE, thread.id(), StartRun.of("What is the weather like in Paris in spring?"));
        assertThat(ticket.status()).isEqualTo(RunStatus.RUNNING);

        EventCollector live = EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, ticket.runId(), 0)).awaitDone();
        assertThat(live.completed()).isTrue();
        assertContiguous(live.events(), 0);
        assertThat(live.events().get(0).event()).isInstanceOf(AgentStreamEvent.RunStarted.class);
        assertThat(live.events().get(live.events().size() - 1).event())
                .isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));

        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(run.usage().totalTokens()).isEqualTo(19);
        assertThat(run.startedAt()).isNotNull();
        assertThat(run.finishedAt()).isNotNull();
        assertThat(live.reduced().messages()).isEqualTo(storedMessagesOf(run));

        AssistantMessage answer = (AssistantMessage) store.findMessage(ticket.assistantMessageId()).orElseThrow();
        assertThat(answer.text()).isEqualTo("Hello there, friend.");
        assertThat(answer.status()).isEqualTo(MessageStatus.COMPLETED);
        assertThat(answer.usage().totalTokens()).isEqualTo(19);
        assertThat(answer.parentMessageId()).isEqualTo(ticket.userMessageId());

        ChatThread after = engine.listThreads(ALICE).get(0);
        assertThat(after.title()).isEqualTo("What is the weather like in Pa");
        assertThat(after.title()).hasSize(30);
        assertThat(after.lastMessageAt()).isAfterOrEqualTo(thread.lastMessageAt());

        engine.close();
        ChatEngine reopened = engine(ScriptedRuntime.playing(Scripts.instant("unused")));
        EventCollector replay = EventCollector.unbounded().subscribeTo(reopened.subscribe(ALICE, ticket.runId(), 0)).awaitDone();
        assertThat(replay.events()).isEqualTo(live.events());
        ThreadView view = reopened.getThread(ALICE, thread.id());
        assertThat(view.messages()).extracting(Message::kind).containsExactly(MessageKind.USER, MessageKind.ASSISTANT,
                MessageKind.THINKING);
        assertThat(((ThinkingMessage) view.messages().get(2)).text()).isEqualTo("Let me think. Done.");
        EventCollector tail = EventCollector.unbounded()
                .subscribeTo(reopened.subscribe(ALICE, ticket.runId(), live.events().size())).awaitDone();
        assertThat(tail.completed()).isTrue();
        assertThat(tail.events()).isEmpty();
    }

    @Test
    void startRunReturnsBeforeTheRuntimeAnswers() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ChatEngine engine = engine(ScriptedRuntime.playing((request, p) -> {
            p.text("waiting…");
            release.await(10, TimeUnit.SECONDS);
            p.finish();
        }));
        ChatThread thread = engine.createThread(ALICE, new NewThread("Mine", "model-x", "skill-y"));
        RunTicket ticket = engine.startRun(ALICE, thread.id(), StartRun.of("hi"));

        assertThat(engine.state(ALICE, ticket.runId()).run().status()).isIn(RunStatus.RUNNING);
        UserMessage user = (UserMessage) store.findMessage(ticket.userMessageId()).orElseThrow();
        assertThat(user.text()).isEqualTo("hi");
        AssistantMessage placeholder = (AssistantMessage) store.findMessage(ticket.assistantMessageId()).orElseThrow();
        assertThat(placeholder.status()).isEqualTo(MessageStatus.IN_PROGRESS);
        release.countDown();
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(engine.getThread(ALICE, thread.id()).thread().title()).as("an explicit title stays").isEqualTo("Mine");
        RunRequest request = ((ScriptedRuntime) engine.runtime()).requests().get(0);
        assertThat(request.modelId()).isEqualTo("model-x");
        assertThat(request.skill()).isEqualTo("skill-y");
        assertThat(request.ownerId()).isEqualTo(ALICE);
    }

    @Test
    void aLateSubscriberGetsWhatFollowsItsCursorThenLiveEvents() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ChatEngine engine = engine(ScriptedRuntime.playing((request, p) -> {
            for (int i = 0; i < 50; i++) {
                p.text("a" + i);
            }
            release.await(10, TimeUnit.SECONDS);
            for (int i = 0; i < 50; i++) {
                p.text("b" + i);
            }
            p.finish();
        }));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("go"));
        EventCollector first = EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, ticket.runId(), 0)).awaitCount(52);
        EventCollector late = EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, ticket.runId(), 30));
        release.countDown();
        first.awaitDone();
        late.awaitDone();
        assertContiguous(late.events(), 30);
        assertThat(late.events()).isEqualTo(first.events().subList(30, first.events().size()));
    }

    // ------------------------------------------------------------------ stop and disconnect

    @Test
    void aSubscriberLeavingDoesNotStopTheRun() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.slow(20, 5)));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("go"));
        EventCollector leaving = EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, ticket.runId(), 0)).awaitCount(3);
        leaving.cancel();
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text()).endsWith("s19 ");
        assertThat(((ScriptedRuntime) engine.runtime()).cancels()).isEmpty();
    }

    @Test
    void cancelStopsTheRunThroughTheRuntimeAndKeepsThePartialAnswer() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.streamsUntilCancelled());
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("go"));
        EventCollector events = EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, ticket.runId(), 0)).awaitCount(4);

        engine.cancel(ALICE, ticket.runId());
        events.awaitDone();
        Run run = awaitRun(engine, ticket.runId(), RunStatus.CANCELLED);
        assertThat(runtime.cancels()).containsExactly(ticket.runId());
        AssistantMessage answer = (AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow();
        assertThat(answer.text()).isEqualTo("Partial answer");
        assertThat(answer.status()).isEqualTo(MessageStatus.CANCELLED);
        assertThat(store.listStepMessagesAfter(run.id(), null, 1_000)).allMatch(m -> m.status().isFinal());
        assertThat(engine.cancel(ALICE, ticket.runId()).status()).as("cancelling again changes nothing")
                .isEqualTo(RunStatus.CANCELLED);

        RunTicket next = engine.startRun(ALICE, threadId, StartRun.of("again"));
        assertThat(next.status()).as("the thread is free again").isEqualTo(RunStatus.RUNNING);
    }

    @Test
    void withoutRuntimeCancelTheStreamIsClosed() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.streamsUntilCancelled())
                .withCapabilities(EnumSet.noneOf(Capability.class));
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("go"));
        EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, ticket.runId(), 0)).awaitCount(4);
        engine.cancel(ALICE, ticket.runId());
        awaitRun(engine, ticket.runId(), RunStatus.CANCELLED);
        assertThat(runtime.cancels()).isEmpty();
        await(() -> runtime.isPlaying(ticket.runId()), playing -> !playing, "the script to be stopped");
    }

    @Test
    void aRuntimeThatIgnoresTheCancelIsCutOffAfterTheGracePeriod() {
        ScriptedRuntime runtime = ScriptedRuntime.playing((request, p) -> {
            p.text("deaf");
            Thread.sleep(5_000);
        });
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("go"));
        EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, ticket.runId(), 0)).awaitCount(3);
        engine.cancel(ALICE, ticket.runId());
        Run run = awaitRun(engine, ticket.runId(), RunStatus.CANCELLED);
        assertThat(runtime.cancels()).containsExactly(ticket.runId());
        assertThat(run.finishedAt()).isNotNull();
    }

    // ------------------------------------------------------------------ human in the loop

    @Test
    void aClarifyPausesTheRunAndItsAnswerReachesTheRuntimeOnce() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Paris", "Rome")));
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("plan a trip"));

        awaitRun(engine, ticket.runId(), RunStatus.WAITING_FOR_INPUT);
        RunState waiting = engine.state(ALICE, ticket.runId());
        assertThat(waiting.pendingInputs()).singleElement().satisfies(input -> {
            assertThat(input.inputId()).isEqualTo("ask-1");
            assertThat(input.request()).isEqualTo(new ClarifyRequest("Which city?", List.of("Paris", "Rome"), false));
        });
        assertThat(store.findInput(ticket.runId(), "ask-1")).as("stored before it was shown").isPresent();
        assertThat(store.findRun(ticket.runId()).orElseThrow().status()).isEqualTo(RunStatus.WAITING_FOR_INPUT);

        assertCode(ErrorCode.INVALID_INPUT, () -> engine.answer(ALICE, ticket.runId(), "ask-1", List.of(" ")));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.answer(ALICE, ticket.runId(), "ask-1", List.of()));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.answer(ALICE, ticket.runId(), "ask-1", List.of("Paris", "Rome")));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.answer(ALICE, ticket.runId(), "no-such-question", List.of("Rome")));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.answer(MALLORY, ticket.runId(), "ask-1", List.of("Rome")));
        assertThat(runtime.answers()).isEmpty();

        assertThat(engine.answer(ALICE, ticket.runId(), "ask-1", List.of("Rome"))).isEqualTo(AnswerResult.ACCEPTED);
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(engine.answer(ALICE, ticket.runId(), "ask-1", List.of("Rome"))).isEqualTo(AnswerResult.REPLAYED);
        assertCode(ErrorCode.CONFLICT, () -> engine.answer(ALICE, ticket.runId(), "ask-1", List.of("Paris")));
        assertThat(runtime.answers()).hasSize(1);

        assertThat(((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text())
                .isEqualTo("You chose Rome.");
        ClarifyMessage stored = (ClarifyMessage) store.listStepMessagesAfter(run.id(), null, 1_000).stream()
                .filter(m -> m instanceof ClarifyMessage).findFirst().orElseThrow();
        assertThat(stored.answer()).containsExactly("Rome");
        assertThat(stored.status()).isEqualTo(MessageStatus.COMPLETED);
        assertThat(engine.state(ALICE, ticket.runId()).pendingInputs()).isEmpty();
    }

    @Test
    void aClarifyLeftUnansweredIsWithdrawnWhenTheRunIsCancelled() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.clarify("Sure?", List.of("yes", "no"))));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("go"));
        awaitRun(engine, ticket.runId(), RunStatus.WAITING_FOR_INPUT);
        engine.cancel(ALICE, ticket.runId());
        awaitRun(engine, ticket.runId(), RunStatus.CANCELLED);
        assertCode(ErrorCode.CONFLICT, () -> engine.answer(ALICE, ticket.runId(), "ask-1", List.of("yes")));
        assertThat(engine.state(ALICE, ticket.runId()).pendingInputs()).isEmpty();
    }

    // ------------------------------------------------------------------ multi-turn and double texting

    @Test
    void theRuntimeSessionGoesWithEveryRunAndFollowsRotation() {
        AtomicInteger turn = new AtomicInteger();
        ScriptedRuntime runtime = ScriptedRuntime.of(request -> Scripts.echoWithSession("sess-" + turn.incrementAndGet()));
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        for (int i = 1; i <= 3; i++) {
            RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("turn " + i));
            awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
            assertThat(store.findThread(threadId).orElseThrow().runtimeSessionId()).isEqualTo("sess-" + i);
        }
        assertThat(runtime.requests()).extracting(RunRequest::runtimeSessionId).containsExactly(null, "sess-1", "sess-2");
    }

    @Test
    void aBusyThreadRejectsASecondRunByDefaultAndWritesNothing() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ChatEngine engine = engine(ScriptedRuntime.playing((request, p) -> {
            release.await(10, TimeUnit.SECONDS);
            p.finish();
        }));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        engine.startRun(ALICE, threadId, StartRun.of("first"));
        int messagesBefore = store.listTopLevelMessages(threadId, null, 100).size();
        assertCode(ErrorCode.CONFLICT, () -> engine.startRun(ALICE, threadId, StartRun.of("second")));
        assertThat(store.listTopLevelMessages(threadId, null, 100)).hasSize(messagesBefore);
        assertThat(store.findThreadRuns(threadId, EnumSet.allOf(RunStatus.class))).hasSize(1);
        release.countDown();
    }

    @Test
    void enqueueRunsTheSecondMessageAfterTheFirst() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ScriptedRuntime runtime = ScriptedRuntime.of(request -> request.userMessage().equals("first")
                ? (r, p) -> {
                    release.await(10, TimeUnit.SECONDS);
                    p.text("one");
                    p.finish();
                }
                : Scripts.instant("two"));
        ChatEngine engine = engine(runtime, b -> b.doubleTexting(DoubleTexting.ENQUEUE));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = engine.startRun(ALICE, threadId, StartRun.of("first"));
        RunTicket second = engine.startRun(ALICE, threadId, StartRun.of("second"));
        assertThat(second.status()).isEqualTo(RunStatus.QUEUED);
        EventCollector waiting = EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, second.runId(), 0));
        Thread.sleep(50);
        assertThat(engine.state(ALICE, second.runId()).run().status()).isEqualTo(RunStatus.QUEUED);
        assertThat(runtime.requests()).hasSize(1);

        release.countDown();
        Run one = awaitRun(engine, first.runId(), RunStatus.SUCCEEDED);
        Run two = awaitRun(engine, second.runId(), RunStatus.SUCCEEDED);
        assertThat(two.startedAt()).isAfterOrEqualTo(one.finishedAt());
        assertThat(runtime.requests()).extracting(RunRequest::userMessage).containsExactly("first", "second");
        waiting.awaitDone();
        assertThat(waiting.reduced().message(second.assistantMessageId())).isInstanceOfSatisfying(AssistantMessage.class,
                a -> assertThat(a.text()).isEqualTo("two"));
    }

    @Test
    void aQueuedRunCanBeCancelledBeforeItStarts() throws Exception {
        CountDownLatch release = new CountDownLatch(1);
        ScriptedRuntime runtime = ScriptedRuntime.playing((r, p) -> {
            release.await(10, TimeUnit.SECONDS);
            p.finish();
        });
        ChatEngine engine = engine(runtime, b -> b.doubleTexting(DoubleTexting.ENQUEUE));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = engine.startRun(ALICE, threadId, StartRun.of("first"));
        RunTicket queued = engine.startRun(ALICE, threadId, StartRun.of("second"));
        engine.cancel(ALICE, queued.runId());
        awaitRun(engine, queued.runId(), RunStatus.CANCELLED);
        release.countDown();
        awaitRun(engine, first.runId(), RunStatus.SUCCEEDED);
        Thread.sleep(50);
        assertThat(runtime.requests()).hasSize(1);
        assertThat(store.findMessage(queued.assistantMessageId()).orElseThrow().status()).isEqualTo(MessageStatus.CANCELLED);
    }

    @Test
    void interruptCancelsTheActiveRunAndStartsTheNewOne() {
        ScriptedRuntime runtime = ScriptedRuntime.of(request -> request.userMessage().equals("first")
                ? Scripts.streamsUntilCancelled() : Scripts.instant("fresh"));
        ChatEngine engine = engine(runtime, b -> b.doubleTexting(DoubleTexting.INTERRUPT));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = engine.startRun(ALICE, threadId, StartRun.of("first"));
        EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, first.runId(), 0)).awaitCount(4);
        RunTicket second = engine.startRun(ALICE, threadId, StartRun.of("second"));
        assertThat(second.status()).isEqualTo(RunStatus.QUEUED);
        awaitRun(engine, first.runId(), RunStatus.CANCELLED);
        awaitRun(engine, second.runId(), RunStatus.SUCCEEDED);
        assertThat(runtime.cancels()).containsExactly(first.runId());
    }

    // ------------------------------------------------------------------ regenerate

    @Test
    void regenerateKeepsTheOldAnswerAsAVariant() {
        AtomicInteger count = new AtomicInteger();
        ScriptedRuntime runtime = ScriptedRuntime.of(request -> Scripts.instant("answer " + count.incrementAndGet()));
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = engine.startRun(ALICE, threadId, StartRun.of("tell me a joke"));
        awaitRun(engine, first.runId(), RunStatus.SUCCEEDED);

        assertCode(ErrorCode.INVALID_INPUT, () -> engine.regenerate(ALICE, first.userMessageId()));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.regenerate(MALLORY, first.assistantMessageId()));
        RunTicket again = engine.regenerate(ALICE, first.assistantMessageId());
        assertThat(again.userMessageId()).isNull();
        Run regenerated = awaitRun(engine, again.runId(), RunStatus.SUCCEEDED);
        assertThat(regenerated.isRegeneration()).isTrue();
        assertThat(runtime.retries()).containsExactly(again.runId());
        assertThat(runtime.requests().get(1).userMessage()).isEqualTo("tell me a joke");

        AssistantMessage second = (AssistantMessage) store.findMessage(again.assistantMessageId()).orElseThrow();
        assertThat(second.parentMessageId()).isEqualTo(first.userMessageId());
        assertThat(second.text()).isEqualTo("answer 2");
        ThreadView view = engine.getThread(ALICE, threadId);
        assertThat(view.messages()).extracting(Message::id)
                .containsExactly(first.userMessageId(), first.assistantMessageId(), again.assistantMessageId());
        assertThat(view.variants()).containsEntry(first.assistantMessageId(), new VariantPosition(0, 2))
                .containsEntry(again.assistantMessageId(), new VariantPosition(1, 2));

        RunTicket later = engine.startRun(ALICE, threadId, StartRun.of("another"));
        awaitRun(engine, later.runId(), RunStatus.SUCCEEDED);
        assertCode(ErrorCode.CONFLICT, () -> engine.regenerate(ALICE, first.assistantMessageId()));
        assertThat(engine.regenerate(ALICE, later.assistantMessageId()).status()).isEqualTo(RunStatus.RUNNING);
    }

    // ------------------------------------------------------------------ host actions

    @Test
    void aHostActionRunsOnceAndItsResultContinuesTheLoop() {
        AtomicInteger calls = new AtomicInteger();
        ScriptedRuntime runtime = ScriptedRuntime.playing((request, p) -> {
            p.emit(new AgentStreamEvent.ToolCallStart(request.runId() + ":tool", "exec-1", "lookup_order", "{\"id\":"));
            p.emit(new AgentStreamEvent.ToolCallArgs("exec-1", "42}"));
            p.emit(new AgentStreamEvent.ToolCallEnd("exec-1"));
            String first = p.awaitToolResult("exec-1").result();
            p.emit(new AgentStreamEvent.ToolCallEnd("exec-1"));
            String repeat = p.awaitToolResult("exec-1").result();
            p.text(first + " / " + repeat);
            p.finish();
        });
        ChatEngine engine = engine(runtime, b -> b.hostAction(new HostAction(
                new HostToolSpec("lookup_order", "Finds an order", "{\"type\":\"object\"}"),
                call -> "order " + call.arguments() + " #" + calls.incrementAndGet())));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("where is my order?"));
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        assertThat(calls.get()).isEqualTo(1);
        assertThat(runtime.requests().get(0).hostTools()).extracting(HostToolSpec::name).containsExactly("lookup_order");
        assertThat(runtime.toolResults()).hasSize(2).allMatch(r -> r.result().equals("order {\"id\":42} #1"));
        assertThat(((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text())
                .isEqualTo("order {\"id\":42} #1 / order {\"id\":42} #1");
        List<Message> steps = store.listStepMessagesAfter(run.id(), null, 1_000);
        assertThat(steps).filteredOn(m -> m instanceof ResultMessage).hasSize(1)
                .allSatisfy(m -> assertThat(((ResultMessage) m).result()).isEqualTo("order {\"id\":42} #1"));
        assertThat(steps).filteredOn(m -> m instanceof ActionExecutionMessage)
                .allSatisfy(m -> assertThat(m.status()).isEqualTo(MessageStatus.COMPLETED));
    }

    @Test
    void aFailingHostActionBecomesAnErrorResultNotACrashedRun() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.callsHostAction("explode", "{}"));
        ChatEngine engine = engine(runtime, b -> b.hostAction(new HostAction(
                new HostToolSpec("explode", "Always fails", "{}"), call -> {
                    throw new IllegalStateException("database offline");
                })));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("try it"));
        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(runtime.toolResults()).singleElement().satisfies(r -> assertThat(r.error()).isTrue());
        assertThat(((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text())
                .isEqualTo("The tool failed: host action explode failed: database offline");
        assertThat(store.listStepMessagesAfter(run.id(), null, 1_000)).filteredOn(m -> m instanceof ActionExecutionMessage)
                .allSatisfy(m -> assertThat(m.status()).isEqualTo(MessageStatus.FAILED));
    }

    // ------------------------------------------------------------------ tools, todos, feedback

    @Test
    void toolCallsAndTodosAreStoredAsSteps() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.toolsAndTodos()));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("weather?"));
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        ThreadView view = engine.getThread(ALICE, threadId);
        assertThat(view.messages()).extracting(Message::kind).containsExactly(MessageKind.USER, MessageKind.ASSISTANT,
                MessageKind.STATUS, MessageKind.TODO, MessageKind.ACTION_EXECUTION, MessageKind.RESULT);
        ActionExecutionMessage call = (ActionExecutionMessage) view.messages().get(4);
        assertThat(call.arguments()).isEqualTo("{\"q\":\"weather\"}");
        TodoMessage todos = (TodoMessage) view.messages().get(3);
        assertThat(todos.items()).extracting(i -> i.status()).containsExactly(TodoStatus.COMPLETED, TodoStatus.IN_PROGRESS);
        assertThat(todos.status()).isEqualTo(MessageStatus.COMPLETED);
    }

    @Test
    void feedbackIsStoredAndHandedToTheRuntime() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.instant("ok"));
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("rate me"));
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        engine.feedback(ALICE, ticket.assistantMessageId(), FeedbackRating.DOWN, "too short");
        assertThat(store.findFeedback(ticket.assistantMessageId(), ALICE).orElseThrow().comment()).isEqualTo("too short");
        assertThat(runtime.feedback()).singleElement().satisfies(f -> assertThat(f.rating()).isEqualTo(FeedbackRating.DOWN));
        engine.feedback(ALICE, ticket.assistantMessageId(), FeedbackRating.UP, null);
        assertThat(store.findFeedback(ticket.assistantMessageId(), ALICE).orElseThrow().rating()).isEqualTo(FeedbackRating.UP);

        assertCode(ErrorCode.INVALID_INPUT, () -> engine.feedback(ALICE, ticket.userMessageId(), FeedbackRating.UP, null));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.feedback(MALLORY, ticket.assistantMessageId(), FeedbackRating.UP, null));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.feedback(ALICE, "no-such-message", FeedbackRating.UP, null));
    }

    // ------------------------------------------------------------------ failures

    @Test
    void everyKindOfRuntimeFailureEndsTheRunFailedAndKeepsTheThreadUsable() {
        Map<String, ScriptedRuntime.Script> scripts = Map.of(
                "error event", Scripts.failsWith("RATE_LIMITED", "the provider said 429"),
                "exception", Scripts.throwsMidStream(new java.io.IOException("connection reset")),
                "no terminal", Scripts.endsWithoutTerminal(),
                "ok", Scripts.instant("fine"));
        ScriptedRuntime runtime = ScriptedRuntime.of(request -> scripts.get(request.userMessage()));
        ChatEngine engine = engine(runtime);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();

        Run errorEvent = runTo(engine, threadId, "error event", RunStatus.FAILED);
        assertThat(errorEvent.error().code()).isEqualTo("RATE_LIMITED");
        assertThat(errorEvent.error().message()).isEqualTo("the provider said 429");
        AssistantMessage partial = (AssistantMessage) store.findMessage(errorEvent.assistantMessageId()).orElseThrow();
        assertThat(partial.text()).isEqualTo("Half an ans");
        assertThat(partial.status()).isEqualTo(MessageStatus.FAILED);
        assertThat(partial.error().code()).isEqualTo("RATE_LIMITED");

        Run exception = runTo(engine, threadId, "exception", RunStatus.FAILED);
        assertThat(exception.error().code()).isEqualTo("RUNTIME_FAILED");
        assertThat(exception.error().message()).isEqualTo("connection reset");

        Run noTerminal = runTo(engine, threadId, "no terminal", RunStatus.FAILED);
        assertThat(noTerminal.error().message()).contains("without a final event");

        runTo(engine, threadId, "ok", RunStatus.SUCCEEDED);
    }

    @Test
    void aRuntimeThatThrowsOnStartFailsTheRun() {
        ScriptedRuntime broken = ScriptedRuntime.playing(Scripts.instant("x"));
        dev.parley.chat.runtime.RuntimeAdapter throwing = new dev.parley.chat.runtime.RuntimeAdapter() {
            @Override
            public java.util.concurrent.Flow.Publisher<AgentStreamEvent> generateResponse(RunRequest request) {
                throw new dev.parley.chat.ChatException(ErrorCode.RUNTIME_UNAVAILABLE, "bridge refused the connection");
            }
        };
        ChatEngine engine = ChatEngine.builder().runtime(throwing).store(store).build();
        try {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("hi"));
            Run run = awaitRun(engine, ticket.runId(), RunStatus.FAILED);
            assertThat(run.error().code()).isEqualTo("RUNTIME_UNAVAILABLE");
            assertThat(run.error().message()).isEqualTo("bridge refused the connection");
        } finally {
            engine.close();
        }
        assertThat(broken.requests()).isEmpty();
    }

    private Run runTo(ChatEngine engine, String threadId, String message, RunStatus status) {
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of(message));
        return awaitRun(engine, ticket.runId(), status);
    }

    // ------------------------------------------------------------------ slow subscribers

    @Test
    void aSlowSubscriberIsCutOffWithItsCursorAndResumesFromIt() throws Exception {
        CountDownLatch subscribed = new CountDownLatch(1);
        ScriptedRuntime.Script burst = Scripts.manyDeltas(2_000);
        ChatEngine engine = engine(ScriptedRuntime.playing((request, p) -> {
            subscribed.await(10, TimeUnit.SECONDS);
            burst.play(request, p);
        }), b -> b.limits(EngineLimits.defaults().withSubscriberLagLimit(100)));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("go"));
        EventCollector slow = EventCollector.requesting(5).subscribeTo(engine.subscribe(ALICE, ticket.runId(), 0));
        subscribed.countDown();
        slow.awaitDone();
        assertThat(slow.error()).isInstanceOfSatisfying(SlowConsumerException.class,
                e -> assertThat(e.lastSeq()).isEqualTo(5));
        assertThat(slow.events()).hasSize(5);

        Run run = awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        EventCollector resumed = EventCollector.unbounded()
                .subscribeTo(engine.subscribe(ALICE, ticket.runId(), 5)).awaitDone();
        assertContiguous(resumed.events(), 5);
        EventCollector whole = EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, ticket.runId(), 0)).awaitDone();
        assertThat(whole.reduced().messages()).isEqualTo(storedMessagesOf(run));
        assertThat(resumed.events()).isEqualTo(whole.events().subList(5, whole.events().size()));
    }

    // ------------------------------------------------------------------ threads

    @Test
    void threadsAreListedUpdatedAndDeleted() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("ok")),
                b -> b.clock(new SteppingClock(Instant.parse("2026-01-01T00:00:00Z"))));
        ChatThread a = engine.createThread(ALICE, new NewThread("first", null, null));
        ChatThread b = engine.createThread(ALICE, NewThread.empty());
        RunTicket ticket = engine.startRun(ALICE, a.id(), StartRun.of("make me newest"));
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(engine.listThreads(ALICE)).extracting(ChatThread::id).containsExactly(a.id(), b.id());
        ThreadPage first = engine.listThreads(ALICE, null, 1);
        assertThat(first.threads()).extracting(ChatThread::id).containsExactly(a.id());
        ThreadPage second = engine.listThreads(ALICE, first.nextCursor(), 1);
        assertThat(second.threads()).extracting(ChatThread::id).containsExactly(b.id());
        assertThat(second.nextCursor()).as("the last page").isNull();

        ChatThread renamed = engine.updateThread(ALICE, b.id(), ThreadUpdate.builder().title(" Renamed ").modelId("m")
                .skill("s").archived(true).build());
        assertThat(renamed.title()).isEqualTo("Renamed");
        assertThat(renamed.modelId()).isEqualTo("m");
        assertThat(renamed.skill()).isEqualTo("s");
        assertThat(renamed.status()).isEqualTo(ThreadStatus.ARCHIVED);
        ChatThread cleared = engine.updateThread(ALICE, b.id(), ThreadUpdate.builder().modelId(null).archived(false).build());
        assertThat(cleared.modelId()).isNull();
        assertThat(cleared.skill()).isEqualTo("s");
        assertThat(cleared.title()).isEqualTo("Renamed");
        assertThat(cleared.status()).isEqualTo(ThreadStatus.ACTIVE);

        engine.deleteThread(ALICE, a.id());
        assertThat(engine.listThreads(ALICE)).extracting(ChatThread::id).containsExactly(b.id());
        assertThat(store.findRun(ticket.runId())).isEmpty();
        assertCode(ErrorCode.NOT_FOUND, () -> engine.getThread(ALICE, a.id()));
    }

    @Test
    void aThreadWithAnActiveRunCannotBeDeleted() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.streamsUntilCancelled()));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("go"));
        assertCode(ErrorCode.CONFLICT, () -> engine.deleteThread(ALICE, threadId));
        engine.cancel(ALICE, ticket.runId());
        awaitRun(engine, ticket.runId(), RunStatus.CANCELLED);
        engine.deleteThread(ALICE, threadId);
        assertThat(store.findThread(threadId)).isEmpty();
    }

    @Test
    void aLongThreadIsReadNewestPageFirst() {
        AtomicInteger count = new AtomicInteger();
        ChatEngine engine = engine(ScriptedRuntime.of(r -> Scripts.answer("reply " + count.incrementAndGet())));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        for (int i = 1; i <= 5; i++) {
            runTo(engine, threadId, "message " + i, RunStatus.SUCCEEDED);
        }
        ThreadView newest = engine.getThread(ALICE, threadId, null, 4);
        List<String> texts = newest.messages().stream().filter(m -> m.kind().isTopLevel())
                .map(m -> m instanceof UserMessage ? ((UserMessage) m).text() : ((AssistantMessage) m).text())
                .collect(Collectors.toList());
        assertThat(texts).containsExactly("message 4", "reply 4", "message 5", "reply 5");
        assertThat(newest.messages()).filteredOn(m -> m.kind() == MessageKind.THINKING).hasSize(2);
        assertThat(newest.olderCursor()).isNotNull();

        ThreadView older = engine.getThread(ALICE, threadId, newest.olderCursor(), 4);
        assertThat(older.messages()).filteredOn(m -> m.kind() == MessageKind.USER)
                .extracting(m -> ((UserMessage) m).text()).containsExactly("message 2", "message 3");
        ThreadView oldest = engine.getThread(ALICE, threadId, older.olderCursor(), 4);
        assertThat(oldest.messages()).filteredOn(m -> m.kind().isTopLevel()).hasSize(2);
        assertThat(oldest.olderCursor()).isNull();
    }

    // ------------------------------------------------------------------ isolation and bad input

    @Test
    void anotherOwnersDataIsNotFoundOnEveryCall() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.clarify("?", List.of())));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("hi"));
        awaitRun(engine, ticket.runId(), RunStatus.WAITING_FOR_INPUT);

        assertThat(engine.listThreads(MALLORY)).isEmpty();
        assertCode(ErrorCode.NOT_FOUND, () -> engine.getThread(MALLORY, threadId));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.updateThread(MALLORY, threadId, ThreadUpdate.builder().title("x").build()));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.deleteThread(MALLORY, threadId));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.startRun(MALLORY, threadId, StartRun.of("hi")));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.regenerate(MALLORY, ticket.assistantMessageId()));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.cancel(MALLORY, ticket.runId()));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.answer(MALLORY, ticket.runId(), "ask-1", List.of("x")));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.state(MALLORY, ticket.runId()));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.subscribe(MALLORY, ticket.runId(), 0));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.feedback(MALLORY, ticket.assistantMessageId(), FeedbackRating.UP, null));
        assertThat(engine.state(ALICE, ticket.runId()).run().status()).isEqualTo(RunStatus.WAITING_FOR_INPUT);
        assertThat(store.findThread(threadId).orElseThrow().title()).isEqualTo("hi");
    }

    @Test
    void badInputIsRejectedAndWritesNothing() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("ok")),
                b -> b.limits(EngineLimits.defaults().withMaxMessageLength(100)));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();

        assertCode(ErrorCode.INVALID_INPUT, () -> engine.startRun(ALICE, threadId, StartRun.of("  \n ")));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.startRun(ALICE, threadId, StartRun.of("x".repeat(101))));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.startRun(ALICE, threadId, new StartRun("hi", null, null, 0, Map.of())));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.startRun(ALICE, threadId, new StartRun("hi", " ", null, null, Map.of())));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.startRun(ALICE, "no-such-thread", StartRun.of("hi")));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.startRun(" ", threadId, StartRun.of("hi")));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.listThreads(ALICE, "not a cursor", 10));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.listThreads(ALICE, "bm9jb2xvbg", 10));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.listThreads(ALICE, null, 0));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.listThreads(ALICE, null, 10_000));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.getThread(ALICE, threadId, "not-a-message", 10));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.getThread(ALICE, threadId, null, -5));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.createThread(ALICE, new NewThread("   ", null, null)));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.updateThread(ALICE, threadId, ThreadUpdate.builder().title("").build()));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.state(ALICE, "no-such-run"));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.cancel(ALICE, "no-such-run"));

        assertThat(store.listTopLevelMessages(threadId, null, 10)).isEmpty();
        assertThat(store.findThreadRuns(threadId, EnumSet.allOf(RunStatus.class))).isEmpty();
        assertThat(store.findThread(threadId).orElseThrow().title()).isNull();
        assertThat(engine.listThreads(ALICE)).hasSize(1);

        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("x".repeat(100)));
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.subscribe(ALICE, ticket.runId(), -1));
    }

    @Test
    void aModelOrSkillTheRuntimeDoesNotOfferIsRefusedBeforeAnythingIsStored() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.instant("ok")).offering(
                List.of(new dev.parley.chat.runtime.ModelOption("gpt-x", "GPT X", null)),
                List.of(new dev.parley.chat.runtime.SkillOption("travel", "Travel", "plans trips")));
        ChatEngine engine = engine(runtime);
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.createThread(ALICE, new NewThread(null, "nope", null)));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.createThread(ALICE, new NewThread(null, null, "../../etc/passwd")));
        assertThat(engine.listThreads(ALICE)).isEmpty();
        String threadId = engine.createThread(ALICE, new NewThread(null, "gpt-x", "travel")).id();
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.startRun(ALICE, threadId,
                new StartRun("hi", "nope", null, null, Map.of())));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.startRun(ALICE, threadId,
                new StartRun("hi", null, "../../etc/passwd", null, Map.of())));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.updateThread(ALICE, threadId,
                ThreadUpdate.builder().modelId("nope").build()));
        assertThat(store.listTopLevelMessages(threadId, null, 10)).as("nothing stored").isEmpty();
        assertThat(store.findThread(threadId).orElseThrow().modelId()).isEqualTo("gpt-x");
        RunTicket ok = engine.startRun(ALICE, threadId, StartRun.of("hi"));
        awaitRun(engine, ok.runId(), RunStatus.SUCCEEDED);

        ChatEngine open = engine(ScriptedRuntime.playing(Scripts.instant("ok")));
        String anything = open.createThread(ALICE, new NewThread(null, "any-model", "any-skill")).id();
        assertThat(open.startRun(ALICE, anything, StartRun.of("hi")).status())
                .as("a runtime that lists nothing takes any name").isEqualTo(RunStatus.RUNNING);
    }

    @Test
    void aRuntimeThatOffersNoSkillsRefusesEverySkillBeforeAnythingIsStored() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.instant("ok")).offering(List.of(), List.of()));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.startRun(ALICE, threadId,
                new StartRun("hi", null, "../../etc/passwd", null, Map.of())));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.startRun(ALICE, threadId,
                new StartRun("hi", "nope", null, null, Map.of())));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.createThread(ALICE, new NewThread(null, null, "travel")));
        assertThat(store.listTopLevelMessages(threadId, null, 10)).as("nothing stored").isEmpty();
        assertThat(store.findThreadRuns(threadId, EnumSet.allOf(RunStatus.class))).isEmpty();
        assertThat(engine.listThreads(ALICE)).hasSize(1);
        RunTicket ok = engine.startRun(ALICE, threadId, StartRun.of("hi"));
        awaitRun(engine, ok.runId(), RunStatus.SUCCEEDED);
    }
}
