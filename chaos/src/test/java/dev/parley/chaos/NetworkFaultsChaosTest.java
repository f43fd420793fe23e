package dev.parley.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.TodoItem;
import dev.parley.chat.model.TodoStatus;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.runtime.StreamPublisher;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;

/**
 * Browsers on a bad network: runs of 1 000 events of every kind, each read over the starter's SSE endpoint
 * by two clients that drop the connection at random bytes (inside events too; half with a reset) and
 * reconnect with {@code Last-Event-ID}, one from the start, one joining late (often after the end, so from
 * the store). Each client must end with every seq exactly once, each event byte-identical to the stored
 * one, and its events must fold into exactly the stored messages.
 */
class NetworkFaultsChaosTest {
    /** Events the runtime emits per run; with run_started and the first messages the log holds 1 000. */
    private static final int RUNTIME_EVENTS = 998;
    private static final int CLIENTS_PER_RUN = 2;

    private long connections;
    private long drops;
    private long resets;
    private long eventsChecked;
    private long lost;
    private long duplicated;
    private long corrupted;
    private int messagesCompared;

    @Test
    void droppedClientsReassembleEveryEventExactlyOnce() throws Exception {
        long seed = Chaos.seed(1704);
        Random random = new Random(seed);
        int runs = Chaos.size(30, 100);
        int concurrent = 10;
        Path file = Paths.get("target", "chaos-network-" + UUID.randomUUID() + ".db");
        long began = System.nanoTime();
        try (PlayingRuntime runtime = new PlayingRuntime(NetworkFaultsChaosTest::thousandEvents);
                InProcessHost host = InProcessHost.start(runtime, file)) {
            Rest rest = new Rest(host.baseUrl());
            ExecutorService clients = Executors.newFixedThreadPool(concurrent * CLIENTS_PER_RUN);
            for (int wave = 0; wave < runs; wave += concurrent) {
                List<String> sessions = new ArrayList<>();
                List<String> runIds = new ArrayList<>();
                List<Future<List<SseClient.Event>>> reads = new ArrayList<>();
                for (int i = wave; i < Math.min(runs, wave + concurrent); i++) {
                    String session = rest.newSession();
                    String runId = rest.startRun(session, "run " + i);
                    sessions.add(session);
                    runIds.add(runId);
                    for (int c = 0; c < CLIENTS_PER_RUN; c++) {
                        long joinAfter = c == 0 ? 0 : random.nextInt(1_500);
                        long clientSeed = random.nextLong();
                        reads.add(clients.submit(() -> flakyClient(host.baseUrl(), runId, joinAfter, new Random(clientSeed))));
                    }
                }
                for (int r = 0; r < runIds.size(); r++) {
                    String runId = runIds.get(r);
                    rest.awaitState(runId, Rest::terminal, Duration.ofSeconds(60), "its end");
                    List<SseClient.Event> stored = Replays.readAll(host.baseUrl(), runId);
                    assertThat(stored).hasSize(RUNTIME_EVENTS + 2);
                    String storedMessages = Replays.stored(rest, sessions.get(r), runId);
                    for (int c = 0; c < CLIENTS_PER_RUN; c++) {
                        check(reads.get(r * CLIENTS_PER_RUN + c).get(), stored, storedMessages);
                    }
                    assertThat(rest.status(runId)).isEqualTo(RunStatus.SUCCEEDED.name());
                }
            }
            clients.shutdown();
        }
        new Chaos.Figures("network-faults", seed).put("runs", runs).put("eventsPerRun", RUNTIME_EVENTS + 2)
                .put("clients", (long) runs * CLIENTS_PER_RUN).put("connections", connections)
                .put("dropsInjected", drops).put("resets", resets).put("eventsChecked", eventsChecked)
                .put("lost", lost).put("duplicated", duplicated).put("notByteIdentical", corrupted)
                .put("messageSetsIdentical", messagesCompared)
                .put("wallMillis", (System.nanoTime() - began) / 1_000_000).report();
        assertThat(lost).as("events a client never got").isZero();
        assertThat(duplicated).as("events a client got twice").isZero();
        assertThat(corrupted).as("events that differ from the stored ones").isZero();
        assertThat(messagesCompared).isEqualTo(runs * CLIENTS_PER_RUN);
    }

    /** Holds one client's events to the stored log and the stored messages. */
    private synchronized void check(List<SseClient.Event> got, List<SseClient.Event> stored, String storedMessages) {
        Map<Long, String> byseq = new HashMap<>();
        for (SseClient.Event event : stored) {
            byseq.put(event.seq(), event.data());
        }
        Map<Long, Integer> times = new HashMap<>();
        for (SseClient.Event event : got) {
            times.merge(event.seq(), 1, Integer::sum);
            if (!event.data().equals(byseq.get(event.seq()))) {
                corrupted++;
            }
        }
        eventsChecked += got.size();
        lost += stored.stream().filter(e -> !times.containsKey(e.seq())).count();
        duplicated += times.values().stream().mapToInt(n -> n - 1).sum();
        if (Replays.folded(got).equals(storedMessages)) {
            messagesCompared++;
        }
    }

    /**
     * A client that joins after {@code joinAfter} ms and reads to the run's terminal event, dropping most
     * connections after a random number of bytes and coming back from the last whole event it got.
     */
    private List<SseClient.Event> flakyClient(String base, String runId, long joinAfter, Random random)
            throws IOException {
        Rest.sleep(joinAfter);
        List<SseClient.Event> got = new ArrayList<>();
        Long cursor = null;
        for (int attempt = 0; attempt < 2_000; attempt++) {
            boolean drop = random.nextInt(10) < 8;
            boolean reset = random.nextBoolean();
            try (SseClient.Stream stream = SseClient.open(base, "/api/chat/runs/" + runId + "/stream", cursor)) {
                count(drop, reset);
                if (drop) {
                    stream.dropAfter(1 + random.nextInt(30_000), reset);
                }
                SseClient.Event event;
                while ((event = stream.next()) != null) {
                    got.add(event);
                    cursor = event.seq();
                    if (event.terminal()) {
                        return got;
                    }
                }
            } catch (java.net.SocketTimeoutException hung) {
                throw new AssertionError("the stream of " + runId + " went silent after seq " + cursor + "; threads in "
                        + ThreadDumps.write("network-" + runId), hung);
            }
            Rest.sleep(random.nextInt(20));
        }
        throw new AssertionError("a client of " + runId + " did not reach the end");
    }

    private synchronized void count(boolean drop, boolean reset) {
        connections++;
        if (drop) {
            drops++;
            if (reset) {
                resets++;
            }
        }
    }

    /** Every kind a runtime streams, 998 events in bursts of ten, text with non-ASCII characters. */
    private static void thousandEvents(RunRequest request, StreamPublisher.Emitter<AgentStreamEvent> out)
            throws InterruptedException {
        String run = request.runId();
        List<AgentStreamEvent> events = new ArrayList<>();
        events.add(new AgentStreamEvent.StatusUpdate(run + ":status:0", "lifecycle", "Working — «chaos» ✓"));
        for (int i = 1; events.size() < RUNTIME_EVENTS - 2; i++) {
            switch (i % 10) {
                case 6 -> events.add(new AgentStreamEvent.ThinkingDelta(run + ":thinking:" + i / 100, "idée " + i + " "));
                case 7 -> events.add(new AgentStreamEvent.ToolCallStart(run + ":tool:" + i, "call-" + i, "lookup",
                        "{\"q\":\"naïve " + i + "\"}"));
                case 8 -> events.add(new AgentStreamEvent.ToolCallResult(run + ":result:" + (i - 1), "call-" + (i - 1),
                        "résultat " + i + " 🙂", i % 20 == 8));
                case 9 -> events.add(new AgentStreamEvent.TodosUpdated(run + ":todo", List.of(
                        new TodoItem("1", "step " + i, i % 30 == 9 ? TodoStatus.COMPLETED : TodoStatus.IN_PROGRESS, null),
                        new TodoItem("2", "next", TodoStatus.PENDING, null))));
                default -> events.add(new AgentStreamEvent.TextDelta(request.assistantMessageId(), "t" + i + " ünï "));
            }
        }
        events.add(new AgentStreamEvent.Usage(100, 900, 1000));
        events.add(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        for (int i = 0; i < events.size(); i++) {
            if (!out.emit(events.get(i))) {
                return;
            }
            if (i % 10 == 9) {
                Thread.sleep(5);
            }
        }
    }
}
