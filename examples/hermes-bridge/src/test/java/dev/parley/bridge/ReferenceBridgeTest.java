package dev.parley.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.AgentStreamEvent.InputOutcome;
import dev.parley.chat.hermes.HermesConfig;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.TodoItem;
import dev.parley.chat.model.TodoStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.runtime.ApprovalReply;
import dev.parley.chat.runtime.ClarifyReply;
import dev.parley.chat.runtime.ConversationHistory;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.BuildTools;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The reference Bridge ({@code parley_bridge}, over the stand-in Hermes) as a child process on loopback, driven
 * through the real {@link HermesRuntimeAdapter}. The adapter talks to it through a proxy that can cut its
 * connections, as a network would.
 */
class ReferenceBridgeTest {
    private Path work;
    private Path victim;
    private Path modelLog;
    private BridgeProcess bridge;
    private CuttableProxy proxy;
    private HermesRuntimeAdapter adapter;
    private int runs;

    @BeforeAll
    static void needsPython() {
        BuildTools.assumePresent("python");
    }

    @BeforeEach
    void start() throws Exception {
        work = Files.createDirectories(Path.of(System.getProperty("bridge.work", "target/bridge-it")))
                .resolve("t" + System.nanoTime());
        Files.createDirectories(work);
        victim = Files.createDirectories(work.resolve("victim"));
        Files.writeString(victim.resolve("keep.txt"), "precious");
        modelLog = work.resolve("model-requests.jsonl");
        bridge = BridgeProcess.overStandIn(work, Map.of("PARLEY_TEST_VICTIM", victim.toString(),
                "HERMES_STANDIN_MODEL_LOG", modelLog.toString())).start();
        proxy = new CuttableProxy(bridge.port());
        adapter = new HermesRuntimeAdapter(HermesConfig.builder().baseUrl("http://127.0.0.1:" + proxy.port())
                .bearerToken(BridgeProcess.TOKEN).reattachAttempts(3).reattachBackoff(Duration.ofMillis(100))
                .idleTimeout(Duration.ofSeconds(5)).build());
    }

    @AfterEach
    void stop() throws Exception {
        adapter.close();
        proxy.close();
        bridge.stop();
        assertThat(bridge.stdout()).as("the Bridge writes nothing to stdout").isEmpty();
        assertThat(bridge.log()).doesNotContain(BridgeProcess.TOKEN);
    }

    private RunRequest request(String message, @Nullable String session, List<Message> history) {
        runs++;
        return new RunRequest("thread-1", "run-" + runs, "alice", "run-" + runs + ":answer", message, session, null, null,
                null, List.of(), Map.of(), ConversationHistory.of(history));
    }

    private RunRequest request(String message) {
        return request(message, null, List.of());
    }

    @Test
    void aTurnWithReasoningAToolAndATodoList() throws Exception {
        RunRequest request = request("look around please");
        Events events = Events.of(adapter.generateResponse(request));

        assertThat(events.all()).first().isInstanceOf(AgentStreamEvent.RuntimeSession.class);
        String thinking = events.of(AgentStreamEvent.ThinkingDelta.class).stream()
                .map(AgentStreamEvent.ThinkingDelta::delta).collect(Collectors.joining());
        assertThat(thinking.strip()).isEqualTo("Let me look around before I answer.");
        AgentStreamEvent.ToolCallStart call = events.await(AgentStreamEvent.ToolCallStart.class,
                c -> c.name().equals("terminal"));
        assertThat(call.arguments()).isEqualTo("{\"command\":\"echo hello from the bridge\"}");
        AgentStreamEvent.ToolCallResult result = events.await(AgentStreamEvent.ToolCallResult.class,
                r -> r.executionId().equals(call.executionId()));
        assertThat(result.result()).contains("hello from the bridge\\n");
        assertThat(result.error()).isFalse();
        assertThat(events.await(AgentStreamEvent.TodosUpdated.class).items()).containsExactly(
                new TodoItem("1", "Look around", TodoStatus.COMPLETED, null),
                new TodoItem("2", "Answer", TodoStatus.IN_PROGRESS, null));
        assertThat(events.await(AgentStreamEvent.Usage.class)).isEqualTo(new AgentStreamEvent.Usage(16, 5, 21));
        assertThat(events.await(AgentStreamEvent.TextFinal.class).text()).isEqualTo("All done.");
        assertThat(events.all()).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
    }

    @Test
    void aClarifyAnswered() throws Exception {
        RunRequest request = request("which city should I pick");
        Events events = Events.of(adapter.generateResponse(request));

        AgentStreamEvent.InputRequested asked = events.await(AgentStreamEvent.InputRequested.class);
        assertThat(asked.request()).isEqualTo(new ClarifyRequest("Which city?", List.of("Paris", "Rome"), false));
        adapter.answerClarify(new ClarifyReply(request.runId(), asked.inputId(), List.of("Paris")));

        assertThat(events.await(AgentStreamEvent.ToolCallResult.class).result()).contains("\"user_response\": \"Paris\"");
        assertThat(events.await(AgentStreamEvent.TextFinal.class).text()).isEqualTo("Going where you said.");
        assertThat(events.all()).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
    }

    @Test
    void anApprovalDeniedAndTheCommandDidNotRun() throws Exception {
        RunRequest request = request("clean up the victim folder");
        Events events = Events.of(adapter.generateResponse(request));

        AgentStreamEvent.InputRequested asked = events.await(AgentStreamEvent.InputRequested.class);
        ApprovalRequest approval = (ApprovalRequest) asked.request();
        assertThat(approval.toolName()).isEqualTo("terminal");
        assertThat(approval.arguments()).contains("rm -rf");
        assertThat(approval.description()).isEqualTo("recursive delete");
        assertThat(approval.decisions()).contains(ApprovalDecision.ALLOW_ONCE, ApprovalDecision.ALLOW_FOR_THREAD,
                ApprovalDecision.DENY).doesNotContain(ApprovalDecision.ALWAYS_ALLOW);
        assertThat(asked.deadline()).isAfter(Instant.now());
        Thread.sleep(300);
        assertThat(victim.resolve("keep.txt")).as("it waits for the person").exists();
        adapter.answerApproval(new ApprovalReply(request.runId(), asked.inputId(), ApprovalDecision.DENY, null));

        AgentStreamEvent.ToolCallResult result = events.await(AgentStreamEvent.ToolCallResult.class);
        assertThat(result.error()).isTrue();
        assertThat(result.result()).contains("BLOCKED");
        assertThat(events.all()).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        assertThat(victim.resolve("keep.txt")).as("the denied command did not run").exists();
    }

    @Test
    void aCancelWhileAClarifyWaits() throws Exception {
        RunRequest request = request("may I go on");
        Events events = Events.of(adapter.generateResponse(request));

        AgentStreamEvent.InputRequested asked = events.await(AgentStreamEvent.InputRequested.class);
        adapter.cancel(request.runId());

        assertThat(events.await(AgentStreamEvent.InputResolved.class))
                .isEqualTo(new AgentStreamEvent.InputResolved(asked.inputId(), InputOutcome.CANCELLED, null));
        assertThat(events.all()).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "cancelled"));
        assertThat(events.of(AgentStreamEvent.TextFinal.class)).isEmpty();
    }

    @Test
    void threeTurnsOfMemoryAlsoAcrossARestartOfTheBridge() throws Exception {
        List<Message> history = new ArrayList<>();
        String session = null;
        for (String turn : List.of("turn one", "turn two", "turn three")) {
            if (turn.equals("turn three")) {
                bridge.stop();
                bridge.start(); // forgets every session
                proxy.target(bridge.port());
            }
            RunRequest request = request(turn, session, List.copyOf(history));
            Events events = Events.of(adapter.generateResponse(request));
            List<AgentStreamEvent> all = events.all();
            assertThat(all).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
            assertThat(events.of(AgentStreamEvent.StatusUpdate.class)).as("no context was lost").isEmpty();
            session = events.await(AgentStreamEvent.RuntimeSession.class).sessionId();
            String answer = events.await(AgentStreamEvent.TextFinal.class).text();
            Instant now = Instant.now();
            history.add(new UserMessage("u" + runs, "thread-1", request.runId(), null, MessageStatus.COMPLETED, now, turn));
            history.add(new AssistantMessage("a" + runs, "thread-1", request.runId(), "u" + runs, MessageStatus.COMPLETED,
                    now, answer, null, null));
        }
        assertThat(((AssistantMessage) history.get(1)).text()).isEqualTo("I see 1 user turns: turn one");
        assertThat(((AssistantMessage) history.get(3)).text()).isEqualTo("I see 2 user turns: turn one | turn two");
        assertThat(((AssistantMessage) history.get(5)).text())
                .isEqualTo("I see 3 user turns: turn one | turn two | turn three");
        assertThat(bridge.log()).as("the restarted Bridge rebuilt the session from Parley's history")
                .contains("from 4 history entries");
    }

    @Test
    void aReattachAfterTheAdaptersConnectionIsCut() throws Exception {
        RunRequest request = request("count slowly");
        Events events = Events.of(adapter.generateResponse(request));

        events.await(AgentStreamEvent.TextDelta.class);
        proxy.cutAll();

        List<AgentStreamEvent> all = events.all();
        assertThat(all).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        String deltas = events.of(AgentStreamEvent.TextDelta.class).stream().map(AgentStreamEvent.TextDelta::delta)
                .collect(Collectors.joining());
        assertThat(deltas).as("every delta exactly once").isEqualTo("one two threefour five six");
        assertThat(events.await(AgentStreamEvent.TextFinal.class).text()).isEqualTo("one two three\nfour five six");
        assertThat(proxy.requestLines()).anyMatch(line -> line.startsWith("GET /runs/" + request.runId() + "/events?after="));
    }

    /**
     * The host (engine and adapter) restarts while a run streams: the reference Bridge keeps the run's frames
     * and finishes the turn, and the next host re-attaches from where its store left the run, to the end. The
     * thread then shows the answer the Bridge gave, every delta once.
     */
    @Test
    void aRestartedHostFollowsARunThatWasStreamingToItsEnd() throws Exception {
        InMemoryChatStore store = new InMemoryChatStore();
        String threadId;
        RunTicket ticket;
        try (ChatEngine first = ChatEngine.builder().store(store).runtime(adapter).build()) {
            threadId = first.createThread("alice", NewThread.empty()).id();
            ticket = first.startRun("alice", threadId, StartRun.of("count slowly"));
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (store.readEvents(ticket.runId(), 0, 100).stream()
                    .noneMatch(e -> e.event() instanceof AgentStreamEvent.TextDelta)) {
                assertThat(System.nanoTime()).as("the first words in time").isLessThan(deadline);
                Thread.sleep(20);
            }
        }
        adapter.close();
        adapter = new HermesRuntimeAdapter(HermesConfig.builder().baseUrl("http://127.0.0.1:" + proxy.port())
                .bearerToken(BridgeProcess.TOKEN).reattachBackoff(Duration.ofMillis(100)).build());
        assertThat(store.findRun(ticket.runId()).orElseThrow().status()).as("left for the next host")
                .isEqualTo(RunStatus.RUNNING);

        try (ChatEngine next = ChatEngine.builder().store(store).runtime(adapter).build()) {
            awaitSucceeded(next, ticket);
            String deltas = store.readEvents(ticket.runId(), 0, 1_000).stream()
                    .filter(e -> e.event() instanceof AgentStreamEvent.TextDelta)
                    .map(e -> ((AgentStreamEvent.TextDelta) e.event()).delta()).collect(Collectors.joining());
            assertThat(deltas).as("every delta exactly once").isEqualTo("one two threefour five six");
            assertThat(((AssistantMessage) store.findMessage(ticket.assistantMessageId()).orElseThrow()).text())
                    .isEqualTo("one two three\nfour five six");
            assertThat(proxy.requestLines()).anyMatch(line -> line.startsWith("GET /runs/" + ticket.runId() + "/events?after="));
        }
    }

    @Test
    void aRegeneratedAnswerIsAskedWithoutTheOldAnswer() throws Exception {
        try (ChatEngine engine = ChatEngine.builder().store(new InMemoryChatStore()).runtime(adapter).build()) {
            String threadId = engine.createThread("alice", NewThread.empty()).id();
            awaitSucceeded(engine, engine.startRun("alice", threadId, StartRun.of("turn one")));
            RunTicket second = awaitSucceeded(engine, engine.startRun("alice", threadId, StartRun.of("turn two")));
            RunTicket again = awaitSucceeded(engine, engine.regenerate("alice", second.assistantMessageId()));

            List<JsonNode> requests = modelRequests(again.runId());
            assertThat(requests).as("the stand-in model was asked for the regenerated answer").isNotEmpty();
            assertThat(conversation(requests.get(0))).as("what the model saw for the regenerated answer")
                    .containsExactly("user: turn one", "assistant: I see 1 user turns: turn one", "user: turn two");
        }
    }

    /**
     * A thread id reused after deletion (AG-UI clients choose their own) does not inherit the old conversation:
     * the Bridge keys the conversation by the thread's id and creation time, and forgets it when the thread is
     * erased, so a command the old conversation approved "for this conversation" is asked about again.
     */
    @Test
    void aThreadIdReusedAfterAnEraseStartsAFreshConversation() throws Exception {
        try (ChatEngine engine = ChatEngine.builder().store(new InMemoryChatStore()).runtime(adapter).build()) {
            engine.openThread("alice", "shared-id");
            RunTicket first = engine.startRun("alice", "shared-id", StartRun.of("clean up the victim folder"));
            String asked = awaitApproval(engine, "alice", first);
            engine.answer("alice", first.runId(), asked,
                    new dev.parley.chat.input.ApprovalAnswer(ApprovalDecision.ALLOW_FOR_THREAD, null));
            awaitSucceeded(engine, "alice", first);
            assertThat(victim.resolve("keep.txt")).as("the approved command ran").doesNotExist();

            assertThat(engine.eraseOwner("alice")).isEqualTo(1);
            assertThat(proxy.requestLines()).as("the Bridge was told to forget the conversation")
                    .anyMatch(line -> line.startsWith("DELETE /threads/shared-id@"));

            Files.writeString(Files.createDirectories(victim).resolve("keep.txt"), "precious again");
            engine.openThread("bob", "shared-id");
            RunTicket again = engine.startRun("bob", "shared-id", StartRun.of("clean up the victim folder"));
            String askedAgain = awaitApproval(engine, "bob", again);
            assertThat(victim.resolve("keep.txt")).as("bob is asked, the command waits").exists();
            engine.answer("bob", again.runId(), askedAgain,
                    new dev.parley.chat.input.ApprovalAnswer(ApprovalDecision.DENY, null));
            awaitSucceeded(engine, "bob", again);
            assertThat(victim.resolve("keep.txt")).as("the denied command did not run").exists();
        }
    }

    private static String awaitApproval(ChatEngine engine, String owner, RunTicket ticket) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            List<dev.parley.chat.input.PendingInput> pending = engine.state(owner, ticket.runId()).pendingInputs();
            if (!pending.isEmpty()) {
                return pending.get(0).inputId();
            }
            assertThat(engine.state(owner, ticket.runId()).run().status()).as("run %s", ticket.runId())
                    .isIn(RunStatus.QUEUED, RunStatus.RUNNING);
            assertThat(System.nanoTime()).as("an approval for run %s in time", ticket.runId()).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    private static RunTicket awaitSucceeded(ChatEngine engine, RunTicket ticket) throws InterruptedException {
        return awaitSucceeded(engine, "alice", ticket);
    }

    private static RunTicket awaitSucceeded(ChatEngine engine, String owner, RunTicket ticket) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        RunStatus status = engine.state(owner, ticket.runId()).run().status();
        while (status != RunStatus.SUCCEEDED) {
            assertThat(status).as("run %s", ticket.runId()).isIn(RunStatus.QUEUED, RunStatus.RUNNING,
                    RunStatus.WAITING_FOR_INPUT);
            assertThat(System.nanoTime()).as("run %s ends in time", ticket.runId()).isLessThan(deadline);
            Thread.sleep(50);
            status = engine.state(owner, ticket.runId()).run().status();
        }
        return ticket;
    }

    /** The stand-in model's requests of one run (the Bridge's task id is Parley's run id), oldest first. */
    private List<JsonNode> modelRequests(String runId) throws Exception {
        ObjectMapper json = new ObjectMapper();
        List<JsonNode> requests = new ArrayList<>();
        for (String line : Files.readAllLines(modelLog)) {
            JsonNode request = json.readTree(line);
            if (request.path("task_id").asText().equals(runId)) {
                requests.add(request);
            }
        }
        return requests;
    }

    /** A request's messages after the system prompt, as "role: content". */
    private static List<String> conversation(JsonNode request) {
        List<String> lines = new ArrayList<>();
        for (JsonNode message : request.path("messages")) {
            if (!message.path("role").asText().equals("system")) {
                lines.add(message.path("role").asText() + ": " + message.path("content").asText());
            }
        }
        return lines;
    }
}
