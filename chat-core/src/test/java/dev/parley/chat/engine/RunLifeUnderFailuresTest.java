package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.ToolResult;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.InterceptedStore;
import dev.parley.chat.testing.ScriptedRuntime;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.LongStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The engine's guarantee, tried at every store call of a run's life: whichever call fails, the run
 * reaches exactly one terminal event, its end is stored, and its thread takes the next message.
 *
 * <p>A recording pass lists the store calls a run makes — start, host action, clarify and answer, end —
 * and each case then fails one of them (the n-th call of one method) once.
 */
class RunLifeUnderFailuresTest extends EngineTestSupport {
    /** The n-th calls tried per method: enough to reach the start, the middle and the end of a run. */
    private static final int OCCURRENCES_PER_METHOD = 4;

    /** Streams, calls a host action, asks a question, answers with what it got. */
    private static ScriptedRuntime.Script lifeOfARun() {
        return (request, p) -> {
            p.emit(new AgentStreamEvent.StatusUpdate(request.runId() + ":status", "lifecycle", "planning"));
            p.text("Looking it up. ");
            p.emit(new AgentStreamEvent.ToolCallStart(request.runId() + ":tool", "exec-1", "lookup", "{}"));
            p.emit(new AgentStreamEvent.ToolCallEnd("exec-1"));
            ToolResult result = p.awaitToolResult("exec-1");
            p.emit(new AgentStreamEvent.ClarifyRequested(request.runId() + ":clarify", "ask-1", "Which?",
                    List.of("a", "b"), false, null));
            ClarifyReply reply = p.awaitAnswer("ask-1");
            p.text(result.result() + " and " + reply.answer().get(0));
            p.emit(new AgentStreamEvent.Usage(3, 4, 7));
            p.finish();
        };
    }

    private ChatEngine engineOver(ChatStore target) {
        store = target;
        return engine(ScriptedRuntime.playing(lifeOfARun()), b -> b.hostAction(new HostAction(
                new HostToolSpec("lookup", "Looks up", "{}"), call -> "found")));
    }

    /** Plays one run to its end, answering its question; returns its id, or null if the start was refused. */
    private static String playOneRun(ChatEngine engine, String threadId) {
        RunTicket ticket;
        try {
            ticket = engine.startRun(ALICE, threadId, StartRun.of("go"));
        } catch (ChatException e) {
            return null;
        }
        String runId = ticket.runId();
        await(() -> {
            RunState state = probe(() -> engine.state(ALICE, runId));
            if (state == null) {
                return false;
            }
            for (PendingInput question : state.pendingInputs()) {
                probe(() -> engine.answer(ALICE, runId, question.inputId(), List.of("a")));
            }
            return state.run().status().isTerminal();
        }, done -> done, "run " + runId + " to end");
        return runId;
    }

    private static <T> T probe(java.util.function.Supplier<T> call) {
        try {
            return call.get();
        } catch (ChatException e) {
            return null;
        }
    }

    static Stream<Arguments> storeCallsOfARunsLife() {
        Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();
        AtomicInteger recording = new AtomicInteger();
        RunLifeUnderFailuresTest pass = new RunLifeUnderFailuresTest();
        ChatStore recorder = InterceptedStore.of(new InMemoryChatStore(), (method, args, proceed) -> {
            if (recording.get() > 0 && !method.equals("close")) {
                calls.computeIfAbsent(method, k -> new AtomicInteger()).incrementAndGet();
            }
            return proceed.call();
        });
        ChatEngine engine = pass.engineOver(recorder);
        try {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            recording.set(1);
            String runId = playOneRun(engine, threadId);
            await(() -> recorder.findRun(runId).orElseThrow().status().isTerminal(), done -> done, "the end stored");
            recording.set(0);
        } finally {
            pass.closeEngines();
        }
        Map<String, Integer> sorted = new LinkedHashMap<>();
        calls.keySet().stream().sorted().forEach(m -> sorted.put(m, calls.get(m).get()));
        List<Arguments> cases = new ArrayList<>();
        sorted.forEach((method, count) -> {
            for (int n = 1; n <= Math.min(count, OCCURRENCES_PER_METHOD); n++) {
                cases.add(Arguments.of(method, n));
            }
        });
        assertThat(cases).as("the recording pass saw the run's store calls").hasSizeGreaterThan(10);
        return cases.stream();
    }

    @ParameterizedTest(name = "{0} #{1} fails")
    @MethodSource("storeCallsOfARunsLife")
    void theRunEndsOnceIsStoredAndFreesItsThreadWhicheverStoreCallFails(String method, int occurrence) {
        InMemoryChatStore memory = new InMemoryChatStore();
        AtomicInteger seen = new AtomicInteger();
        AtomicInteger armed = new AtomicInteger();
        ChatEngine engine = engineOver(InterceptedStore.of(memory, (name, args, proceed) -> {
            if (armed.get() > 0 && name.equals(method) && seen.incrementAndGet() == occurrence) {
                throw new ChatException(ErrorCode.STORE_FAILURE, "injected: " + method + " #" + occurrence);
            }
            return proceed.call();
        }));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        armed.set(1);

        String runId = playOneRun(engine, threadId);
        if (runId == null) {
            assertThat(memory.findThreadRuns(threadId, EnumSet.allOf(RunStatus.class)))
                    .as("a refused start stores no run").isEmpty();
        } else {
            Run stored = await(() -> memory.findRun(runId).orElseThrow(), run -> run.status().isTerminal(),
                    "the run's end to be stored");
            List<RunEvent> events = memory.readEvents(runId, 0, 10_000);
            assertThat(events).extracting(RunEvent::seq).as("no gap")
                    .containsExactlyElementsOf(LongStream.rangeClosed(1, events.size()).boxed().toList());
            assertThat(events).filteredOn(e -> e.event().isTerminal()).as("exactly one end").hasSize(1);
            assertThat(events.get(events.size() - 1).event().isTerminal()).isTrue();
            assertThat(await(() -> probe(() -> engine.state(ALICE, runId)), state -> state != null, "a state read")
                    .run().status()).as("memory agrees with the store").isEqualTo(stored.status());
        }
        String next = await(() -> playOneRun(engine, threadId), id -> id != null, "the thread to take a message");
        assertThat(engine.state(ALICE, next).run().status()).isEqualTo(RunStatus.SUCCEEDED);
    }

    /**
     * Found by the simulation: when the store kept refusing the write that ends a run, the writer stored it
     * row by row and left the run's ended record out; the run's end was logged while its record said RUNNING,
     * holding its thread in the store for good (and after a restart it was followed again and ended twice).
     * The ended record is kept and written again until the store takes it.
     */
    @Test
    void aRunsEndedRecordTheStoreKeepsRefusingIsWrittenAgainNotLeftOut() {
        InMemoryChatStore memory = new InMemoryChatStore();
        AtomicInteger refusals = new AtomicInteger();
        ChatEngine engine = engineOver(InterceptedStore.of(memory, (name, args, proceed) -> {
            if (name.equals("write") && ((dev.parley.chat.store.StoreBatch) args[0]).runs().stream()
                    .anyMatch(run -> run.status().isTerminal()) && refusals.incrementAndGet() <= 12) {
                throw new ChatException(ErrorCode.STORE_FAILURE, "injected: the run's ended record is refused");
            }
            return proceed.call();
        }));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();

        String runId = playOneRun(engine, threadId);
        Run stored = await(() -> memory.findRun(runId).orElseThrow(), run -> run.status().isTerminal(),
                "the run's ended record to be stored");
        assertThat(refusals.get()).as("the store refused it often enough to be written row by row").isGreaterThan(12);
        assertThat(stored.status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(memory.readEvents(runId, 0, 10_000)).filteredOn(e -> e.event().isTerminal()).hasSize(1);
        String next = await(() -> playOneRun(engine, threadId), id -> id != null, "the thread to take a message");
        assertThat(engine.state(ALICE, next).run().status()).isEqualTo(RunStatus.SUCCEEDED);
    }

    /** What a listener may throw: a runtime exception, an {@link Error}, a checked exception thrown sneakily. */
    static Stream<Arguments> listenerFailures() {
        return Stream.of(
                Arguments.of("a runtime exception", new IllegalStateException("metrics are down")),
                Arguments.of("an Error", new AssertionError("metrics are down")),
                Arguments.of("a checked exception (Kotlin)", new java.io.IOException("metrics are down")));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("listenerFailures")
    void aListenerThatThrowsFromEveryCallbackChangesNothing(String kind, Throwable failure) {
        ChatEngine engine = engine(ScriptedRuntime.playing(lifeOfARun()), b -> b
                .hostAction(new HostAction(new HostToolSpec("lookup", "Looks up", "{}"), call -> "found"))
                .listener(new EngineListener() {
                    @Override
                    public void runStarted(Run run) {
                        sneakyThrow(failure);
                    }

                    @Override
                    public void runFinished(Run run) {
                        sneakyThrow(failure);
                    }

                    @Override
                    public void eventAppended(RunEvent event) {
                        sneakyThrow(failure);
                    }

                    @Override
                    public void subscriberOpened(String runId) {
                        sneakyThrow(failure);
                    }

                    @Override
                    public void subscriberClosed(String runId) {
                        sneakyThrow(failure);
                    }
                }));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        String runId = playOneRun(engine, threadId);
        assertThat(engine.state(ALICE, runId).run().status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(Set.copyOf(store.readEvents(runId, 0, 100).stream().map(RunEvent::type).toList()))
                .contains("run_finished", "tool_call_result", "input_resolved");
        dev.parley.chat.testing.EventCollector replay = dev.parley.chat.testing.EventCollector.unbounded()
                .subscribeTo(engine.subscribe(ALICE, runId, 0)).awaitDone();
        assertThat(replay.completed()).as("a subscriber still gets the whole run and its end").isTrue();
        assertThat(playOneRun(engine, threadId)).as("the thread takes the next message").isNotNull();
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> void sneakyThrow(Throwable failure) throws E {
        throw (E) failure;
    }
}
