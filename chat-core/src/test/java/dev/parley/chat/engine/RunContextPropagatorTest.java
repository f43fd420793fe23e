package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The caller's context reaches the run's launch thread through the {@link RunContextPropagator} seam. */
class RunContextPropagatorTest extends EngineTestSupport {
    /** Stands for a tracing context: what the caller's thread holds when it starts a run. */
    private static final ThreadLocal<String> TRACE = new ThreadLocal<>();

    /** Captures TRACE on the caller's thread and sets it on the launch thread until the scope closes. */
    private final RunContextPropagator propagator = run -> {
        String captured = TRACE.get();
        return () -> {
            String before = TRACE.get();
            TRACE.set(captured);
            return () -> TRACE.set(before);
        };
    };

    /** What TRACE held on the engine's thread when each run started, by run id. */
    private final Map<String, String> seenAtStart = new ConcurrentHashMap<>();
    private final EngineListener recorder = new EngineListener() {
        @Override
        public void runStarted(Run run) {
            seenAtStart.put(run.id(), String.valueOf(TRACE.get()));
        }
    };

    @AfterEach
    void clearTrace() {
        TRACE.remove();
    }

    @Test
    void theCallersContextIsCurrentWhileTheRunIsLaunched() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.answer("hi")),
                b -> b.contextPropagator(propagator).listener(recorder));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();

        TRACE.set("trace-1");
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("hello"));

        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(seenAtStart).containsEntry(ticket.runId(), "trace-1");
    }

    @Test
    void aQueuedRunGetsTheContextOfTheCallThatStartedIt() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.slow(5, 20)),
                b -> b.contextPropagator(propagator).listener(recorder).doubleTexting(DoubleTexting.ENQUEUE));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();

        TRACE.set("first");
        RunTicket first = engine.startRun(ALICE, threadId, StartRun.of("one"));
        TRACE.set("second");
        RunTicket second = engine.startRun(ALICE, threadId, StartRun.of("two"));
        TRACE.remove();

        assertThat(second.status()).isEqualTo(RunStatus.QUEUED);
        awaitRun(engine, second.runId(), RunStatus.SUCCEEDED);
        assertThat(seenAtStart).containsEntry(first.runId(), "first").containsEntry(second.runId(), "second");
    }

    @Test
    void aPropagatorThatThrowsChangesNothingForTheRun() {
        List<String> calls = new CopyOnWriteArrayList<>();
        RunContextPropagator failing = run -> {
            calls.add("capture");
            return () -> {
                calls.add("open");
                throw new IllegalStateException("broken tracing");
            };
        };
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.answer("hi")),
                b -> b.contextPropagator(failing).listener(recorder));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();

        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("hello"));

        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        assertThat(calls).containsExactly("capture", "open");
        assertThat(seenAtStart).containsEntry(ticket.runId(), "null");
    }

    @Test
    void theThreadsOwnContextComesBackAfterTheLaunch() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.answer("hi")),
                b -> b.contextPropagator(propagator).listener(recorder).doubleTexting(DoubleTexting.ENQUEUE));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        TRACE.set("caller");
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("hello"));
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        TRACE.remove();
        RunTicket untraced = engine.startRun(ALICE, threadId, StartRun.of("again"));

        awaitRun(engine, untraced.runId(), RunStatus.SUCCEEDED);
        assertThat(seenAtStart).containsEntry(untraced.runId(), "null");
    }
}
