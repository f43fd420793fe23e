package dev.parley.bridge;

import static org.assertj.core.api.Assertions.assertThat;

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
        bridge = new BridgeProcess(work, Map.of("PARLEY_TEST_VICTIM", victim.toString())).start();
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
}
