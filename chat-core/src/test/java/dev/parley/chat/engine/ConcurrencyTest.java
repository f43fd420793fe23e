package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.TodoItem;
import dev.parley.chat.model.TodoStatus;
import dev.parley.chat.reduce.RunReducer;
import dev.parley.chat.testing.ScriptedRuntime;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Flow;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * 100 concurrent runs on 100 threads, 1 000 events each, 10 subscribers per run joining at random
 * moments and dropping and reconnecting at random: every subscriber's reassembled messages equal the
 * stored ones, and no subscriber ever sees a gap or a duplicate.
 */
class ConcurrencyTest extends EngineTestSupport {
    private static final int RUNS = 100;
    private static final int EVENTS_PER_RUN = 1_000;
    private static final int SUBSCRIBERS_PER_RUN = 10;

    /** A mix of every streaming kind, with short pauses so subscribers join mid-run. */
    private static ScriptedRuntime.Script busyRun() {
        return (request, p) -> {
            String run = request.runId();
            int emitted = 2;
            int tool = 0;
            while (emitted < EVENTS_PER_RUN - 1) {
                switch (emitted % 10) {
                    case 0:
                        p.thinking(String.valueOf(emitted / 100), "think " + emitted + ". ");
                        emitted++;
                        break;
                    case 3:
                        tool++;
                        p.emit(new AgentStreamEvent.ToolCallStart(run + ":tool:" + tool, "x" + tool, "search", "{\"n\":"));
                        p.emit(new AgentStreamEvent.ToolCallArgs("x" + tool, tool + "}"));
                        p.emit(new AgentStreamEvent.ToolCallEnd("x" + tool));
                        p.emit(new AgentStreamEvent.ToolCallResult(run + ":result:" + tool, "x" + tool, "r" + tool, tool % 7 == 0));
                        emitted += 4;
                        break;
                    case 8:
                        p.emit(new AgentStreamEvent.TodosUpdated(run + ":todo", List.of(
                                new TodoItem("a", "step " + emitted, TodoStatus.IN_PROGRESS, null))));
                        emitted++;
                        break;
                    default:
                        p.text("w" + emitted + " ");
                        emitted++;
                }
                if (emitted % 50 == 0) {
                    Thread.sleep(1);
                }
            }
            p.finish();
        };
    }

    /** A client that subscribes, checks every seq, drops at random and reconnects from its cursor. */
    private final class Client implements Flow.Subscriber<RunEvent> {
        final String runId;
        final ChatEngine engine;
        final ScheduledExecutorService scheduler;
        final RunReducer reducer = new RunReducer();
        final CountDownLatch done = new CountDownLatch(1);
        final ConcurrentLinkedQueue<String> problems;
        long cursor;
        int reconnects;
        Flow.Subscription subscription;
        int outstanding;

        Client(String runId, ChatEngine engine, ScheduledExecutorService scheduler, ConcurrentLinkedQueue<String> problems) {
            this.runId = runId;
            this.engine = engine;
            this.scheduler = scheduler;
            this.problems = problems;
        }

        void connect() {
            engine.subscribe(ALICE, runId, cursor).subscribe(this);
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            outstanding = 1 + ThreadLocalRandom.current().nextInt(64);
            s.request(outstanding);
        }

        @Override
        public void onNext(RunEvent event) {
            if (event.seq() != cursor + 1) {
                problems.add(runId + ": expected seq " + (cursor + 1) + " but got " + event.seq());
            }
            cursor = event.seq();
            reducer.apply(event);
            if (--outstanding == 0) {
                outstanding = 1 + ThreadLocalRandom.current().nextInt(64);
                subscription.request(outstanding);
            }
            if (!event.event().isTerminal() && ThreadLocalRandom.current().nextInt(400) == 0) {
                subscription.cancel();
                reconnects++;
                scheduler.schedule(this::connect, ThreadLocalRandom.current().nextInt(5), TimeUnit.MILLISECONDS);
            }
        }

        @Override
        public void onError(Throwable t) {
            reconnects++;
            scheduler.schedule(this::connect, 1, TimeUnit.MILLISECONDS);
        }

        @Override
        public void onComplete() {
            done.countDown();
        }
    }

    @Test
    void everySubscriberReassemblesExactlyTheStoredMessages() throws Exception {
        ChatEngine engine = engine(ScriptedRuntime.playing(busyRun()));
        ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(4);
        ConcurrentLinkedQueue<String> problems = new ConcurrentLinkedQueue<>();
        Random random = new Random(42);
        try {
            List<String> runIds = new ArrayList<>();
            List<Client> clients = new ArrayList<>();
            for (int i = 0; i < RUNS; i++) {
                String threadId = engine.createThread(ALICE, NewThread.empty()).id();
                RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("run " + i));
                runIds.add(ticket.runId());
                for (int s = 0; s < SUBSCRIBERS_PER_RUN; s++) {
                    Client client = new Client(ticket.runId(), engine, scheduler, problems);
                    clients.add(client);
                    scheduler.schedule(client::connect, random.nextInt(80), TimeUnit.MILLISECONDS);
                }
            }
            for (Client client : clients) {
                assertThat(client.done.await(60, TimeUnit.SECONDS)).as("client of " + client.runId + " finished").isTrue();
            }
            assertThat(problems).isEmpty();
            AtomicInteger reconnects = new AtomicInteger();
            for (String runId : runIds) {
                Run run = awaitRun(engine, runId, RunStatus.SUCCEEDED);
                assertThat(store.lastSeq(runId)).isEqualTo(EVENTS_PER_RUN);
                var stored = storedMessagesOf(run);
                for (Client client : clients) {
                    if (client.runId.equals(runId)) {
                        assertThat(client.reducer.status()).isEqualTo(RunStatus.SUCCEEDED);
                        assertThat(client.reducer.messages()).isEqualTo(stored);
                        reconnects.addAndGet(client.reconnects);
                    }
                }
            }
            assertThat(reconnects.get()).as("clients really dropped and reconnected").isGreaterThan(RUNS);
        } finally {
            scheduler.shutdownNow();
        }
    }
}
