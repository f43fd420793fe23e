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
import org.junit.jupiter.api.Test;

/**
 * Reads the engine makes for one call are bounded by the call, not by how much the thread holds: every
 * row the store hands back is counted (messages, events, ids), and a call on a long thread or a long log
 * reads about as many as it returns.
 */
class BoundedReadsTest extends EngineTestSupport {
    private static final int TURNS = 90;

    private final AtomicLong rowsRead = new AtomicLong();
    /** While set, events that end a run are left out of what the store is given (a log whose end was lost). */
    private final AtomicBoolean dropEnds = new AtomicBoolean();

    BoundedReadsTest() {
        InMemoryChatStore real = new InMemoryChatStore();
        store = InterceptedStore.of(real, (method, args, proceed) -> {
            if (method.equals("write") && dropEnds.get()) {
                StoreBatch batch = (StoreBatch) args[0];
                real.write(new StoreBatch(batch.threadTouches(), batch.runs(), batch.messages(),
                        batch.events().stream().filter(e -> !e.event().isTerminal()).toList(), batch.inputs(),
                        batch.leases(), batch.reservations(), batch.resumePoints(), batch.fence()));
                return null;
            }
            Object result = proceed.call();
            rowsRead.addAndGet(rows(result));
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
}
