package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageKind;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.testing.InterceptedStore;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Reads the engine makes for one call are bounded by the call, not by how much the thread holds: every
 * row the store hands back is counted (messages, events, ids), and a call on a long thread or a long log
 * reads about as many as it returns.
 */
class BoundedReadsTest extends EngineTestSupport {
    private static final int TURNS = 90;

    private final AtomicLong rowsRead = new AtomicLong();
    /** The most rows one store call handed back, since the test last cleared it. */
    private final AtomicLong mostRowsInOneCall = new AtomicLong();
    /** While set, events that end a run are left out of what the store is given (a log whose end was lost). */
    private final AtomicBoolean dropEnds = new AtomicBoolean();

    BoundedReadsTest() {
        InMemoryChatStore real = new InMemoryChatStore();
        store = InterceptedStore.of(real, (method, args, proceed) -> {
            if (method.equals("write") && dropEnds.get()) {
                StoreBatch batch = (StoreBatch) args[0];
                real.write(new StoreBatch(batch.threadTouches(), batch.runs(), batch.messages(),
                        batch.events().stream().filter(e -> !e.event().isTerminal()).toList(), batch.inputs(),
                        batch.leases(), batch.reservations(), batch.resumePoints(), batch.fence(), batch.expectedLeaf()));
                return null;
            }
            Object result = proceed.call();
            long rows = rows(result);
            rowsRead.addAndGet(rows);
            mostRowsInOneCall.accumulateAndGet(rows, Math::max);
            return result;
        });
    }

    /** The rows a store call handed back: a list's elements, a map's listed ids, an optional's value. */
    private static long rows(Object result) {
        if (result instanceof Collection<?> list) {
            return list.size();
        }
        if (result instanceof Map<?, ?> map) {
            return map.values().stream().mapToLong(v -> v instanceof Collection<?> c ? c.size() : 1).sum();
        }
        if (result instanceof Optional<?> value) {
            return value.isPresent() ? 1 : 0;
        }
        return 0;
    }

    private long rowsReadBy(Runnable call) {
        long before = rowsRead.get();
        call.run();
        return rowsRead.get() - before;
    }

    @Test
    void aPageBeforeAnyIdReadsThePageNotTheBranch() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.answer("ok")));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        for (int i = 0; i < TURNS; i++) {
            RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("turn " + i));
            awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        }
        String otherThread = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket other = engine.startRun(ALICE, otherThread, StartRun.of("elsewhere"));
        awaitRun(engine, other.runId(), RunStatus.SUCCEEDED);
        ThreadView whole = engine.getThread(ALICE, threadId, null, 200);
        List<Message> top = whole.messages().stream().filter(m -> m.kind().isTopLevel()).toList();
        assertThat(top).hasSize(2 * TURNS);
        String first = top.get(0).id();
        String middle = top.get(TURNS).id();

        long bogus = rowsReadBy(() -> assertCode(ErrorCode.INVALID_INPUT,
                () -> engine.getThread(ALICE, threadId, "no-such-message", 2)));
        long elsewhere = rowsReadBy(() -> assertCode(ErrorCode.INVALID_INPUT,
                () -> engine.getThread(ALICE, threadId, other.userMessageId(), 2)));
        long beforeFirst = rowsReadBy(() -> assertThat(engine.getThread(ALICE, threadId, first, 2).messages()).isEmpty());
        long page = rowsReadBy(() -> assertThat(engine.getThread(ALICE, threadId, middle, 2).messages()
                .stream().filter(m -> m.kind().isTopLevel()).toList()).hasSize(2));

        assertThat(List.of(bogus, elsewhere, beforeFirst)).as("rows read for a cursor with nothing before it on the"
                + " branch of %s messages", 2 * TURNS).allSatisfy(rows -> assertThat(rows).isLessThanOrEqualTo(5));
        assertThat(page).as("rows read for a page of two").isLessThanOrEqualTo(12);
    }

    @Test
    void compactingALogWhoseEndWasNeverStoredReadsItsEndsNotTheLog() throws Exception {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.manyDeltas(500)));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        dropEnds.set(true);
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("long"));
        Run ended = await(() -> store.findRun(ticket.runId()).orElseThrow(), r -> r.status().isTerminal(), "stored end");
        long lastBefore = store.lastSeq(ticket.runId());
        assertThat(store.readEvents(ticket.runId(), lastBefore - 1, 1).get(0).event().isTerminal())
                .as("the stored log lacks its end").isFalse();
        assertThat(lastBefore).isGreaterThan(500);
        Thread.sleep(5);

        long read = rowsReadBy(() -> assertThat(engine.compactEventLogs(Duration.ofMillis(1))).isEqualTo(1));

        List<RunEvent> log = store.readEvents(ticket.runId(), 0, 1_000);
        assertThat(log).extracting(RunEvent::type).containsExactly("run_started", "messages", "status",
                "run_finished");
        assertThat(log.get(3).event()).isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        assertThat(log.get(3).seq()).as("after every seq a client may hold").isGreaterThan(lastBefore);
        assertThat(((AgentStreamEvent.MessagesSnapshot) log.get(1).event()).messages())
                .anyMatch(m -> m.kind() == MessageKind.ASSISTANT && m.id().equals(ended.assistantMessageId()));
        assertThat(read).as("rows read to compact a log of %s events", lastBefore).isLessThan(20);
    }

    private static final int CALLS = 1_500;
    private static final int STEPS_SHOWN = 20;

    /** {@code calls} tool calls, each with its result (two steps each), then an answer. */
    private static ScriptedRuntime.Script toolCalls(int calls) {
        return (request, p) -> {
            String run = request.runId();
            for (int i = 0; i < calls; i++) {
                p.emit(new AgentStreamEvent.ToolCallStart(run + ":tool:" + i, "call-" + i, "lookup", "{\"n\":" + i + "}"));
                p.emit(new AgentStreamEvent.ToolCallEnd("call-" + i));
                p.emit(new AgentStreamEvent.ToolCallResult(run + ":result:" + i, "call-" + i, "found " + i, false));
            }
            p.text("Looked it all up.");
            p.finish();
        };
    }

    /** A thread whose second answer made {@value #CALLS} tool calls, and an engine showing 20 steps of an answer. */
    private record LongRun(ChatEngine engine, ScriptedRuntime runtime, String threadId, RunTicket ticket, int steps) {
    }

    private LongRun aThreadWithALongRun() {
        ScriptedRuntime runtime = ScriptedRuntime.of(request -> request.userMessage().equals("look everything up")
                ? toolCalls(CALLS) : Scripts.answer("ok"));
        ChatEngine engine = engine(runtime, b -> b.limits(EngineLimits.defaults().withPageSizes(10, 50)
                .withMaxStepsPerAnswer(STEPS_SHOWN)));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        awaitRun(engine, engine.startRun(ALICE, threadId, StartRun.of("hello")).runId(), RunStatus.SUCCEEDED);
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("look everything up"));
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        int steps = store.countStepMessages(List.of(ticket.runId())).get(ticket.runId());
        assertThat(steps).isGreaterThanOrEqualTo(2 * CALLS);
        return new LongRun(engine, runtime, threadId, ticket, steps);
    }

    @Test
    void aViewShowsTheNewestStepsOfAnAnswerOfThousandsAndSaysHowManyItLeavesOut() {
        LongRun thread = aThreadWithALongRun();
        List<String> newest = store.listNewestStepMessages(List.of(thread.ticket().runId()), STEPS_SHOWN).stream()
                .map(Message::id).toList();

        AtomicReference<ThreadView> view = new AtomicReference<>();
        long read = rowsReadBy(() -> view.set(thread.engine().getThread(ALICE, thread.threadId(), null, 10)));

        List<Message> messages = view.get().messages();
        int answer = messages.indexOf(messages.stream().filter(m -> m.id().equals(thread.ticket().assistantMessageId()))
                .findFirst().orElseThrow());
        assertThat(messages.subList(answer + 1, messages.size())).extracting(Message::id)
                .as("the answer's newest steps, oldest first").containsExactlyElementsOf(newest);
        assertThat(view.get().omittedSteps()).containsExactly(
                Map.entry(thread.ticket().assistantMessageId(), thread.steps() - STEPS_SHOWN));
        assertThat(read).as("rows read for a view of an answer of %s steps", thread.steps()).isLessThan(50);
    }

    @Test
    void theNextRunsHistoryReadsTheNewestStepsOfEachAnswerAndNoResultWithoutItsCall() {
        LongRun thread = aThreadWithALongRun();
        awaitRun(thread.engine(), thread.engine().startRun(ALICE, thread.threadId(), StartRun.of("and now?")).runId(),
                RunStatus.SUCCEEDED);
        dev.parley.chat.runtime.RunRequest next = thread.runtime().requests().get(2);

        AtomicReference<List<Message>> history = new AtomicReference<>();
        long read = rowsReadBy(() -> history.set(next.history().messages()));

        List<Message> steps = history.get().stream().filter(m -> !m.kind().isTopLevel()).toList();
        assertThat(steps).hasSizeBetween(STEPS_SHOWN - 1, STEPS_SHOWN);
        assertThat(steps.get(0)).as("a result whose call is not kept is left out")
                .isInstanceOf(dev.parley.chat.model.ActionExecutionMessage.class);
        assertThat(steps.get(steps.size() - 1).id()).isEqualTo(thread.ticket().runId() + ":result:" + (CALLS - 1));
        assertThat(read).as("rows read for a history after an answer of %s steps", thread.steps()).isLessThan(40);
    }

    @Test
    void anExportHoldsEveryStepAndReadsThemAPageAtATime() throws Exception {
        LongRun thread = aThreadWithALongRun();
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        mostRowsInOneCall.set(0);

        thread.engine().exportThread(ALICE, thread.threadId(), ExportFormat.JSON, out);

        com.fasterxml.jackson.databind.JsonNode json = dev.parley.chat.json.ChatJson.shared().readTree(out.toString(
                java.nio.charset.StandardCharsets.UTF_8));
        com.fasterxml.jackson.databind.JsonNode answer = json.get("messages").get(3);
        assertThat(answer.get("message").get("id").asText()).isEqualTo(thread.ticket().assistantMessageId());
        assertThat(answer.get("steps")).hasSize(thread.steps());
        assertThat(answer.get("steps").get(0).get("id").asText()).isEqualTo(thread.ticket().runId() + ":tool:0");
        assertThat(mostRowsInOneCall.get()).as("the most rows one read took (the largest page is 50)")
                .isLessThanOrEqualTo(50);

        java.io.ByteArrayOutputStream markdown = new java.io.ByteArrayOutputStream();
        mostRowsInOneCall.set(0);
        thread.engine().exportThread(ALICE, thread.threadId(), ExportFormat.MARKDOWN, markdown);
        assertThat(markdown.toString(java.nio.charset.StandardCharsets.UTF_8).lines()
                .filter(line -> line.startsWith("> Tool `lookup`"))).hasSize(CALLS);
        assertThat(mostRowsInOneCall.get()).isLessThanOrEqualTo(50);
    }

    @Test
    void aCompactedRunKeepsItsNewestStepsAndSaysHowManyItLeavesOut() throws Exception {
        LongRun thread = aThreadWithALongRun();
        Thread.sleep(5);

        long read = rowsReadBy(() -> assertThat(thread.engine().compactEventLogs(Duration.ofMillis(1))).isEqualTo(2));

        List<RunEvent> log = store.readEvents(thread.ticket().runId(), 0, 1_000);
        assertThat(log).extracting(RunEvent::type).containsExactly("run_started", "messages", "status", "run_finished");
        List<Message> snapshot = ((AgentStreamEvent.MessagesSnapshot) log.get(1).event()).messages();
        assertThat(snapshot.subList(2, snapshot.size())).extracting(Message::id).containsExactlyElementsOf(
                store.listNewestStepMessages(List.of(thread.ticket().runId()), STEPS_SHOWN).stream().map(Message::id)
                        .toList());
        assertThat(((AgentStreamEvent.StatusUpdate) log.get(2).event()).text())
                .contains("without its " + (thread.steps() - STEPS_SHOWN) + " oldest steps");
        assertThat(read).as("rows read to compact a run of %s steps (and a short one)", thread.steps()).isLessThan(80);
    }

    @Test
    void noBoundOnStepsShowsEveryStep() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.toolsAndTodos()),
                b -> b.limits(EngineLimits.defaults().withMaxStepsPerAnswer(Integer.MAX_VALUE)));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("tools"));
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        ThreadView view = engine.getThread(ALICE, threadId);

        assertThat(view.messages()).filteredOn(m -> !m.kind().isTopLevel()).extracting(Message::id)
                .containsExactlyElementsOf(store.listStepMessagesAfter(ticket.runId(), null, 100).stream()
                        .map(Message::id).toList())
                .isNotEmpty();
        assertThat(view.omittedSteps()).isEmpty();
    }

    @Test
    void aViewOfARunGoingOnShowsTheNewestOfItsLiveSteps() {
        ChatEngine engine = engine(ScriptedRuntime.playing((request, p) -> {
            for (int i = 0; i < 100; i++) {
                p.emit(new AgentStreamEvent.ToolCallStart("tool:" + i, "call-" + i, "lookup", "{}"));
                p.emit(new AgentStreamEvent.ToolCallEnd("call-" + i));
                p.emit(new AgentStreamEvent.ToolCallResult("result:" + i, "call-" + i, "found", false));
            }
            p.awaitCancel();
        }), b -> b.limits(EngineLimits.defaults().withMaxStepsPerAnswer(STEPS_SHOWN)));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("look"));

        ThreadView view = await(() -> engine.getThread(ALICE, threadId, null, 10),
                v -> v.omittedSteps().getOrDefault(ticket.assistantMessageId(), 0) == 200 - STEPS_SHOWN,
                "the view of the run going on to leave out all but its newest steps");

        assertThat(view.messages()).filteredOn(m -> !m.kind().isTopLevel()).hasSize(STEPS_SHOWN)
                .last().extracting(Message::id).isEqualTo("result:99");
        assertThat(view.messages().stream().filter(m -> m.id().equals(ticket.assistantMessageId())).findFirst()
                .orElseThrow().status()).isEqualTo(dev.parley.chat.model.MessageStatus.IN_PROGRESS);
        engine.cancel(ALICE, ticket.runId());
    }
}
