package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.AnswerResult;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunState;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.engine.ThreadView;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.ClarifyMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.EventCollector;
import dev.parley.chat.testing.FailingStore;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A host restarts on the same database: chat-core's engine over a store built anew must find every
 * thread, message, run and event the previous process stored, and bring the runs it left active in line.
 * Runs against each database (subclasses).
 */
abstract class RestartTest {
    private static final String ALICE = "alice";

    private TestDatabase database;
    private final List<AutoCloseable> opened = new ArrayList<>();
    /** What lets a dead process's scripts end, run after the engines and stores are closed. */
    private final List<Runnable> cleanups = new ArrayList<>();

    abstract TestDatabase createDatabase();

    @BeforeEach
    void openDatabase() {
        database = createDatabase();
    }

    @AfterEach
    void closeEverything() throws Exception {
        List<AutoCloseable> reversed = new ArrayList<>(opened);
        Collections.reverse(reversed);
        for (AutoCloseable closeable : reversed) {
            closeable.close();
        }
        cleanups.forEach(Runnable::run);
        database.close();
    }

    private JdbiChatStore store() {
        JdbiChatStore store = database.store().build();
        opened.add(store);
        return store;
    }

    private ChatEngine engine(ChatStore store, ScriptedRuntime runtime) {
        ChatEngine engine = ChatEngine.builder().runtime(runtime).store(store)
                .limits(EngineLimits.defaults().withCancelGracePeriod(Duration.ofMillis(300)))
                .build();
        opened.add(engine);
        return engine;
    }

    /** A roll-back and an undo are stored: after a restart the branch still ends where they left it. */
    @Test
    void aRolledBackConversationStaysRolledBackAfterARestart() {
        JdbiChatStore store1 = store();
        ChatEngine engine1 = engine(store1, ScriptedRuntime.playing(Scripts.answer("ok")));
        String thread = engine1.createThread(ALICE, NewThread.empty()).id();
        List<RunTicket> sent = new ArrayList<>();
        for (String text : List.of("one", "two", "three")) {
            RunTicket ticket = engine1.startRun(ALICE, thread, StartRun.of(text));
            awaitRun(engine1, ticket.runId(), RunStatus.SUCCEEDED);
            sent.add(ticket);
        }
        engine1.undo(ALICE, thread);
        ThreadView rolledBack = engine1.rollBack(ALICE, sent.get(0).assistantMessageId());
        engine1.close();
        store1.close();

        ScriptedRuntime runtime2 = ScriptedRuntime.playing(Scripts.answer("ok"));
        ChatEngine engine2 = engine(store(), runtime2);
        assertThat(engine2.getThread(ALICE, thread)).isEqualTo(rolledBack);
        assertThat(rolledBack.messages()).filteredOn(m -> m.kind().isTopLevel()).extracting(m -> m.id())
                .containsExactly(sent.get(0).userMessageId(),
                sent.get(0).assistantMessageId());
        RunTicket next = engine2.startRun(ALICE, thread, StartRun.of("two, again"));
        awaitRun(engine2, next.runId(), RunStatus.SUCCEEDED);
        assertThat(runtime2.requests().get(0).history().messages()).extracting(m -> m.id())
                .containsExactly(sent.get(0).userMessageId(), sent.get(0).assistantMessageId());
        assertThat(engine2.switchBranch(ALICE, sent.get(2).userMessageId()).messages()).extracting(m -> m.id())
                .as("the rolled-back messages are all still there").contains(sent.get(2).assistantMessageId());
    }

    /** Follow-up suggestions are stored with their answer: a new engine on the database shows them, nothing asked again. */
    @Test
    void anAnswersSuggestionsAreThereAfterARestart() throws Exception {
        JdbiChatStore store1 = store();
        ChatEngine engine1 = ChatEngine.builder().runtime(ScriptedRuntime.playing(Scripts.answer("ok"))).store(store1)
                .suggestions(request -> dev.parley.chat.model.Suggestions.of(List.of("Tell me more", "Why?")))
                .build();
        opened.add(engine1);
        String thread = engine1.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine1.startRun(ALICE, thread, StartRun.of("hello"));
        assertThat(engine1.suggestions(ALICE, ticket.assistantMessageId(), Duration.ofSeconds(10))
                .get(15, java.util.concurrent.TimeUnit.SECONDS).prompts()).containsExactly("Tell me more", "Why?");
        ThreadView before = engine1.getThread(ALICE, thread);
        engine1.close();
        store1.close();

        ChatEngine engine2 = engine(store(), ScriptedRuntime.playing(Scripts.answer("ok")));
        ThreadView after = engine2.getThread(ALICE, thread);
        assertThat(after).isEqualTo(before);
        AssistantMessage answer = (AssistantMessage) after.messages().stream()
                .filter(m -> m.id().equals(ticket.assistantMessageId())).findFirst().orElseThrow();
        assertThat(answer.suggestions().prompts()).containsExactly("Tell me more", "Why?");
        assertThat(engine2.suggestions(ALICE, ticket.assistantMessageId(), Duration.ZERO)
                .get(1, java.util.concurrent.TimeUnit.SECONDS).prompts()).containsExactly("Tell me more", "Why?");
    }

    @Test
    void aNewEngineSeesEverythingTheOldOneStored() {
        JdbiChatStore store1 = store();
        ScriptedRuntime runtime1 = ScriptedRuntime.of(request -> {
            switch (request.userMessage()) {
                case "weather?":
                    return Scripts.toolsAndTodos();
                case "where to?":
                    return Scripts.clarify("Which city?", List.of("Paris", "Rome"));
                default:
                    return Scripts.answer("Hello there, how can I help?");
            }
        });
        ChatEngine engine1 = engine(store1, runtime1);
        String t1 = engine1.createThread(ALICE, NewThread.empty()).id();
        String t2 = engine1.createThread(ALICE, NewThread.empty()).id();
        Map<String, List<RunEvent>> streams = new LinkedHashMap<>();

        RunTicket hello = engine1.startRun(ALICE, t1, StartRun.of("hello"));
        streams.put(hello.runId(), watch(engine1, hello.runId()).awaitDone().events());
        RunTicket weather = engine1.startRun(ALICE, t1, StartRun.of("weather?"));
        streams.put(weather.runId(), watch(engine1, weather.runId()).awaitDone().events());
        RunTicket again = engine1.regenerate(ALICE, weather.assistantMessageId());
        streams.put(again.runId(), watch(engine1, again.runId()).awaitDone().events());
        RunTicket trip = engine1.startRun(ALICE, t2, StartRun.of("where to?"));
        EventCollector tripEvents = watch(engine1, trip.runId());
        awaitRun(engine1, trip.runId(), RunStatus.WAITING_FOR_INPUT);
        assertThat(engine1.answer(ALICE, trip.runId(), "ask-1", List.of("Rome"))).isEqualTo(AnswerResult.ACCEPTED);
        streams.put(trip.runId(), tripEvents.awaitDone().events());

        List<ChatThread> threads = engine1.listThreads(ALICE);
        ThreadView firstThread = engine1.getThread(ALICE, t1);
        ThreadView secondThread = engine1.getThread(ALICE, t2);
        engine1.close();
        store1.close();

        JdbiChatStore store2 = store();
        ScriptedRuntime runtime2 = ScriptedRuntime.playing(Scripts.instant("not needed"));
        ChatEngine engine2 = engine(store2, runtime2);

        assertThat(engine2.listThreads(ALICE)).isEqualTo(threads).hasSize(2);
        assertThat(engine2.getThread(ALICE, t1)).isEqualTo(firstThread);
        assertThat(engine2.getThread(ALICE, t2)).isEqualTo(secondThread);
        assertThat(firstThread.messages()).filteredOn(m -> m instanceof AssistantMessage)
                .extracting(m -> ((AssistantMessage) m).text())
                .containsExactly("Hello there, how can I help?", "It is sunny.", "It is sunny.");
        assertThat(firstThread.variants().get(again.assistantMessageId()).count()).isEqualTo(2);
        assertThat(secondThread.messages()).filteredOn(m -> m instanceof ClarifyMessage)
                .extracting(m -> ((ClarifyMessage) m).answer()).containsExactly(List.of("Rome"));

        for (Map.Entry<String, List<RunEvent>> stream : streams.entrySet()) {
            String runId = stream.getKey();
            List<RunEvent> original = stream.getValue();
            assertThat(engine2.state(ALICE, runId).run().status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(watch(engine2, runId).awaitDone().events()).as("the replay of " + runId).isEqualTo(original);
            long middle = original.get(original.size() / 2).seq();
            assertThat(watch(engine2, runId, middle).awaitDone().events())
                    .isEqualTo(original.subList(original.size() / 2 + 1, original.size()));
        }
        assertThat(runtime2.requests()).as("nothing ran again").isEmpty();
    }

    /**
     * The run's stream never said where it stands in the runtime (no resume point): the next process cannot
     * follow it, stops it in the runtime and ends it INTERRUPTED above its reservation.
     */
    @Test
    void aRunThatWasRunningWhenTheProcessDiedIsInterruptedAboveItsReservation() {
        JdbiChatStore store1 = store();
        FailingStore process1 = new FailingStore(store1);
        CountDownLatch stalled = new CountDownLatch(1);
        cleanups.add(stalled::countDown);
        ChatEngine engine1 = engine(process1.store(), ScriptedRuntime.playing((request, p) -> {
            p.thinking("1", "Thinking hard.");
            for (String word : List.of("Partial ", "answer ", "so ", "far")) {
                p.text(word);
            }
            stalled.await();
            p.finish();
        }));
        String threadId = engine1.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine1.startRun(ALICE, threadId, StartRun.of("tell me"));
        String runId = ticket.runId();
        List<RunEvent> seen = watch(engine1, runId).awaitCount(7).events();
        await(() -> store1.lastSeq(runId), seq -> seq == 7, "the batch writer to store all 7 events");
        long reserved = store1.reservedSeq(runId);
        assertThat(reserved).as("seqs are reserved ahead of use").isGreaterThan(7);
        assertThat(store1.findRun(runId).orElseThrow().status()).isEqualTo(RunStatus.RUNNING);
        process1.kill();

        JdbiChatStore store2 = store();
        ScriptedRuntime runtime2 = ScriptedRuntime.playing(Scripts.instant("a new answer"));
        ChatEngine engine2 = engine(store2, runtime2);

        Run run = awaitRun(engine2, runId, RunStatus.INTERRUPTED).run();
        assertThat(runtime2.stoppedOrphans()).containsExactly(runId + "@null");
        assertThat(run.error().code()).isEqualTo("INTERRUPTED");
        List<RunEvent> stored = store2.readEvents(runId, 0, 100);
        assertThat(stored).hasSize(8);
        assertThat(stored.subList(0, 7)).isEqualTo(seen.subList(0, 7));
        RunEvent end = stored.get(7);
        assertThat(end.seq()).as("numbered above every seq a client may hold").isEqualTo(reserved + 1);
        assertThat(end.event()).isInstanceOfSatisfying(AgentStreamEvent.RunFinished.class,
                finished -> assertThat(finished.status()).isEqualTo(RunStatus.INTERRUPTED));
        AssistantMessage answer = (AssistantMessage) store2.findMessage(ticket.assistantMessageId()).orElseThrow();
        assertThat(answer.text()).isEqualTo("Partial answer so far");
        assertThat(answer.status()).isEqualTo(MessageStatus.INTERRUPTED);
        assertThat(watch(engine2, runId).awaitDone().events()).isEqualTo(stored);
        assertThat(watch(engine2, runId, 7).awaitDone().events()).containsExactly(end);

        RunTicket next = engine2.startRun(ALICE, threadId, StartRun.of("again"));
        awaitRun(engine2, next.runId(), RunStatus.SUCCEEDED);
    }

    /**
     * The process dies while a run streams on a runtime that carries it on (one runtime outlives both
     * processes, as a Bridge would): the next process, on its own connection to the database, re-attaches
     * from the resume point stored with the run's events and follows the run to its end, every frame once.
     */
    @Test
    void aRunThatWasStreamingWhenTheProcessDiedIsFollowedFromItsStoredResumePoint() {
        ScriptedRuntime bridge = ScriptedRuntime.playing(Scripts.frames(60, 5));
        JdbiChatStore store1 = store();
        FailingStore process1 = new FailingStore(store1);
        ChatEngine engine1 = engine(process1.store(), bridge);
        String threadId = engine1.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine1.startRun(ALICE, threadId, StartRun.of("stream"));
        String runId = ticket.runId();
        await(() -> store1.lastSeq(runId), seq -> seq >= 20, "some frames to be stored");
        process1.kill();

        JdbiChatStore store2 = store();
        ChatEngine engine2 = engine(store2, bridge);
        Run run = awaitRun(engine2, runId, RunStatus.SUCCEEDED).run();

        assertThat(bridge.reattachments()).hasSize(1);
        List<RunEvent> stored = store2.readEvents(runId, 0, 10_000);
        StringBuilder streamed = new StringBuilder();
        stored.stream().filter(e -> e.event() instanceof AgentStreamEvent.TextDelta)
                .forEach(e -> streamed.append(((AgentStreamEvent.TextDelta) e.event()).delta()));
        assertThat(streamed.toString()).isEqualTo(Scripts.framedAnswer(60));
        assertThat(stored).filteredOn(e -> e.event().isTerminal()).hasSize(1);
        assertThat(((AssistantMessage) store2.findMessage(run.assistantMessageId()).orElseThrow()).text())
                .isEqualTo(Scripts.framedAnswer(60));
        assertThat(watch(engine2, runId).awaitDone().events()).isEqualTo(stored);
    }

    @Test
    void aRunWaitingForAnAnswerIsReattachedAndStillAnswerable() {
        JdbiChatStore store1 = store();
        FailingStore process1 = new FailingStore(store1);
        ScriptedRuntime runtime1 = ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Paris", "Rome")));
        ChatEngine engine1 = engine(process1.store(), runtime1);
        String threadId = engine1.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine1.startRun(ALICE, threadId, StartRun.of("plan a trip"));
        String runId = ticket.runId();
        cleanups.add(() -> runtime1.cancel(runId));
        EventCollector before = watch(engine1, runId);
        RunState waiting = awaitRun(engine1, runId, RunStatus.WAITING_FOR_INPUT);
        assertThat(store1.lastSeq(runId)).as("a clarify is stored before it is shown").isEqualTo(waiting.lastSeq());
        assertThat(store1.listPendingInputs(runId)).extracting(PendingInput::inputId).containsExactly("ask-1");
        List<RunEvent> seen = before.awaitCount((int) waiting.lastSeq()).events();
        long reserved = store1.reservedSeq(runId);
        process1.kill();

        JdbiChatStore store2 = store();
        ScriptedRuntime runtime2 = ScriptedRuntime.playing((request, p) -> {
            ClarifyReply reply = p.awaitAnswer("ask-1");
            p.text("Off to " + reply.answer().get(0) + ".");
            p.finish();
        });
        ChatEngine engine2 = engine(store2, runtime2);
        await(runtime2::reattachments, list -> !list.isEmpty(), "the re-attachment");
        assertThat(runtime2.reattachments()).containsExactly(runId + "@resume-at-1");

        RunState state = engine2.state(ALICE, runId);
        assertThat(state.run().status()).isEqualTo(RunStatus.WAITING_FOR_INPUT);
        assertThat(state.pendingInputs()).extracting(input -> ((ClarifyRequest) input.request()).question())
                .containsExactly("Which city?");
        assertThat(engine2.answer(ALICE, runId, "ask-1", List.of("Rome"))).isEqualTo(AnswerResult.ACCEPTED);
        assertThat(engine2.answer(ALICE, runId, "ask-1", List.of("Rome"))).isEqualTo(AnswerResult.REPLAYED);
        awaitRun(engine2, runId, RunStatus.SUCCEEDED);

        AssistantMessage answer = (AssistantMessage) store2.findMessage(ticket.assistantMessageId()).orElseThrow();
        assertThat(answer.text()).isEqualTo("Off to Rome.");
        assertThat(answer.status()).isEqualTo(MessageStatus.COMPLETED);
        PendingInput clarify = store2.findInput(runId, "ask-1").orElseThrow();
        assertThat(clarify.state()).isEqualTo(InputState.ANSWERED);
        assertThat(clarify.answer()).isEqualTo(new ClarifyAnswer(List.of("Rome")));

        List<RunEvent> stored = store2.readEvents(runId, 0, 100);
        assertThat(stored.subList(0, seen.size())).isEqualTo(seen);
        assertThat(stored.get(seen.size()).seq()).as("numbered above the reservation").isEqualTo(reserved + 1);
        assertThat(stored.get(stored.size() - 1).event()).isInstanceOf(AgentStreamEvent.RunFinished.class);
        assertThat(watch(engine2, runId).awaitDone().events()).isEqualTo(stored);
        List<Message> view = engine2.getThread(ALICE, threadId).messages();
        assertThat(view).filteredOn(m -> m instanceof ClarifyMessage)
                .extracting(m -> ((ClarifyMessage) m).answer()).containsExactly(List.of("Rome"));
    }

    private static EventCollector watch(ChatEngine engine, String runId) {
        return watch(engine, runId, 0);
    }

    private static EventCollector watch(ChatEngine engine, String runId, long afterSeq) {
        return EventCollector.unbounded().subscribeTo(engine.subscribe(ALICE, runId, afterSeq));
    }

    private static RunState awaitRun(ChatEngine engine, String runId, RunStatus status) {
        return await(() -> engine.state(ALICE, runId), state -> state.run().status() == status,
                "run " + runId + " to be " + status);
    }

    private static <T> T await(Supplier<T> probe, Predicate<T> condition, String what) {
        return Await.until(probe, condition, what);
    }
}
