package dev.parley.bridge;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.ApprovalReply;
import dev.parley.chat.runtime.ConversationHistory;
import dev.parley.chat.runtime.RunRequest;
import dev.parley.chat.store.InMemoryChatStore;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The checks both transports must pass on a real Hermes Agent, through the real {@link HermesRuntimeAdapter}
 * (and, for memory, regenerate and edit, a real {@code ChatEngine}): what the model was sent is read from the
 * {@link ScriptedModel}'s log. Each check uses markers of its own, so the checks share one Hermes.
 */
@ExtendWith(RealHermesExtension.class)
abstract class RealHermesChecks {
    private static final AtomicInteger RUNS = new AtomicInteger();

    /** The shared Hermes; set by the subclass before its tests run. */
    abstract RealHermes hermes();

    /** The adapter under test, for the subclass' transport. */
    abstract HermesRuntimeAdapter adapter();

    /** A marker no other check uses, so the model's script and log are this check's own. */
    static String marker(String what) {
        return what + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static RunRequest request(String message) {
        int n = RUNS.incrementAndGet();
        String thread = "thread-" + UUID.randomUUID();
        return new RunRequest(thread, "run-" + n + "-" + UUID.randomUUID(), "alice", "answer-" + n, message, null, null,
                null, null, List.of(), Map.of(), ConversationHistory.of(List.of()));
    }

    // ------------------------------------------------------------------ memory, regenerate, edit

    @Test
    void threeTurnsOfMemory() throws Exception {
        String m = marker("memory");
        hermes().model().script(m, ScriptedModel.recall());
        try (ChatEngine engine = engine()) {
            String thread = engine.createThread("alice", NewThread.empty()).id();
            List<String> answers = new ArrayList<>();
            for (String turn : List.of(" one", " two", " three")) {
                answers.add(answer(engine, awaitSucceeded(engine, engine.startRun("alice", thread, StartRun.of(m + turn)))));
            }
            assertThat(answers).containsExactly("I see 1 user turns: " + m + " one",
                    "I see 2 user turns: " + m + " one | " + m + " two",
                    "I see 3 user turns: " + m + " one | " + m + " two | " + m + " three");
            assertThat(ScriptedModel.conversation(last(hermes().model().requestsFor(m + " three"))))
                    .as("what the model saw for the third turn").containsExactly("user: " + m + " one",
                            "assistant: " + answers.get(0), "user: " + m + " two", "assistant: " + answers.get(1),
                            "user: " + m + " three");
        }
    }

    @Test
    void aRegeneratedAnswerIsAskedWithExactlyTheBranchBeforeIt() throws Exception {
        String m = marker("regenerate");
        hermes().model().script(m, ScriptedModel.recall());
        try (ChatEngine engine = engine()) {
            String thread = engine.createThread("alice", NewThread.empty()).id();
            String first = answer(engine, awaitSucceeded(engine, engine.startRun("alice", thread, StartRun.of(m + " one"))));
            RunTicket second = awaitSucceeded(engine, engine.startRun("alice", thread, StartRun.of(m + " two")));
            RunTicket again = awaitSucceeded(engine, engine.regenerate("alice", second.assistantMessageId()));

            List<JsonNode> asked = hermes().model().requestsFor(m + " two");
            assertThat(asked).as("the model was asked for the answer and again for its regeneration").hasSize(2);
            assertThat(ScriptedModel.conversation(asked.get(1))).as("what the model saw for the regenerated answer")
                    .containsExactly("user: " + m + " one", "assistant: " + first, "user: " + m + " two");
            assertThat(answer(engine, again)).isEqualTo("I see 2 user turns: " + m + " one | " + m + " two");
        }
    }

    @Test
    void anEditedMessageIsAskedWithExactlyTheBranchBeforeItAndTheBranchGoesOn() throws Exception {
        String m = marker("edit");
        hermes().model().script(m, ScriptedModel.recall());
        try (ChatEngine engine = engine()) {
            String thread = engine.createThread("alice", NewThread.empty()).id();
            String first = answer(engine, awaitSucceeded(engine, engine.startRun("alice", thread, StartRun.of(m + " one"))));
            RunTicket second = awaitSucceeded(engine, engine.startRun("alice", thread, StartRun.of(m + " two")));
            awaitSucceeded(engine, engine.startRun("alice", thread, StartRun.of(m + " three")));

            RunTicket edited = awaitSucceeded(engine, engine.editMessage("alice", second.userMessageId(),
                    StartRun.of(m + " two, edited")));
            assertThat(ScriptedModel.conversation(last(hermes().model().requestsFor(m + " two, edited"))))
                    .as("what the model saw for the edited message")
                    .containsExactly("user: " + m + " one", "assistant: " + first, "user: " + m + " two, edited");
            String editedAnswer = answer(engine, edited);
            assertThat(editedAnswer).isEqualTo("I see 2 user turns: " + m + " one | " + m + " two, edited");

            awaitSucceeded(engine, engine.startRun("alice", thread, StartRun.of(m + " four")));
            assertThat(ScriptedModel.conversation(last(hermes().model().requestsFor(m + " four"))))
                    .as("what the model saw for the next message on the edited branch")
                    .containsExactly("user: " + m + " one", "assistant: " + first, "user: " + m + " two, edited",
                            "assistant: " + editedAnswer, "user: " + m + " four");
        }
    }

    // ------------------------------------------------------------------ approvals

    @Test
    void anApprovalAllowedRunsTheCommand() throws Exception {
        String m = marker("allow");
        Path victim = victim();
        hermes().model().script(m, ScriptedModel.call("terminal", commandArgs("rm -rf " + victim)),
                ScriptedModel.say("Cleaned up."));
        RunRequest request = request(m + " clean up");
        Events events = Events.of(adapter().generateResponse(request));

        String asked = awaitApproval(events, victim);
        adapter().answerApproval(new ApprovalReply(request.runId(), asked, ApprovalDecision.ALLOW_ONCE, null));

        assertThat(events.all()).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        assertThat(victim).as("the allowed command ran").doesNotExist();
        assertThat(events.await(AgentStreamEvent.ToolCallResult.class).error()).isFalse();
        assertThat(events.await(AgentStreamEvent.TextFinal.class).text()).isEqualTo("Cleaned up.");
        assertThat(toolResultSent(m)).as("the tool result Hermes sent the model").doesNotContain("BLOCKED");
    }

    @Test
    void anApprovalDeniedLeavesTheCommandUnrun() throws Exception {
        String m = marker("deny");
        Path victim = victim();
        hermes().model().script(m, ScriptedModel.call("terminal", commandArgs("rm -rf " + victim)),
                ScriptedModel.say("I left it alone."));
        RunRequest request = request(m + " clean up");
        Events events = Events.of(adapter().generateResponse(request));

        String asked = awaitApproval(events, victim);
        adapter().answerApproval(new ApprovalReply(request.runId(), asked, ApprovalDecision.DENY, null));

        assertThat(events.all()).last().isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null));
        assertThat(victim.resolve("keep.txt")).as("the denied command did not run").exists();
        assertThat(events.await(AgentStreamEvent.ToolCallResult.class).error()).isTrue();
        assertThat(events.await(AgentStreamEvent.TextFinal.class).text()).isEqualTo("I left it alone.");
        assertThat(toolResultSent(m)).as("the tool result Hermes sent the model").contains("BLOCKED");
    }

    /** Waits for the run's approval request for deleting {@code victim}, which has not run meanwhile; its id. */
    private static String awaitApproval(Events events, Path victim) throws Exception {
        AgentStreamEvent.InputRequested asked = events.await(AgentStreamEvent.InputRequested.class);
        assertThat(asked.request()).isInstanceOf(ApprovalRequest.class);
        ApprovalRequest approval = (ApprovalRequest) asked.request();
        assertThat(approval.arguments()).contains("rm -rf " + victim);
        assertThat(approval.description()).as("Hermes says why it asks").containsIgnoringCase("delete");
        assertThat(approval.decisions()).contains(ApprovalDecision.ALLOW_ONCE, ApprovalDecision.DENY);
        assertThat(asked.deadline()).isAfter(Instant.now());
        Thread.sleep(300);
        assertThat(victim.resolve("keep.txt")).as("the command waits for the person").exists();
        return asked.inputId();
    }

    /** The content of the tool message in the model's last request for {@code marker}'s turn. */
    String toolResultSent(String marker) {
        JsonNode request = last(hermes().model().requestsFor(marker));
        String result = null;
        for (JsonNode message : request.path("messages")) {
            if (message.path("role").asText().equals("tool")) {
                result = ScriptedModel.content(message);
            }
        }
        assertThat(result).as("a tool result in the model's last request").isNotNull();
        return result;
    }

    // ------------------------------------------------------------------ stop

    @Test
    void aStopDuringAToolEndsTheRunAndTheCommand() throws Exception {
        String m = marker("stop");
        String seconds = "45." + (1000 + RUNS.incrementAndGet());
        Path touched = hermes().directory("stop").resolve("touched");
        hermes().model().script(m, ScriptedModel.call("terminal", commandArgs("sleep " + seconds + " && touch " + touched)),
                ScriptedModel.say("never said"));
        RunRequest request = request(m + " wait a while");
        Events events = Events.of(adapter().generateResponse(request));

        events.await(AgentStreamEvent.ToolCallStart.class, call -> call.name().equals("terminal"));
        awaitProcess("sleep " + seconds, true);
        long stopped = System.nanoTime();
        adapter().cancel(request.runId());

        assertThat(events.all()).last().isInstanceOfSatisfying(AgentStreamEvent.RunFinished.class,
                end -> assertThat(end.status()).isEqualTo(RunStatus.CANCELLED));
        assertThat(Duration.ofNanos(System.nanoTime() - stopped)).as("the run ended soon after the stop")
                .isLessThan(Duration.ofSeconds(15));
        awaitProcess("sleep " + seconds, false);
        assertThat(events.of(AgentStreamEvent.TextFinal.class)).isEmpty();
        assertThat(touched).doesNotExist();
    }

    /** Waits until a process whose command line contains {@code text} runs ({@code running}) or none does. */
    private static void awaitProcess(String text, boolean running) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(15).toNanos();
        while (processRuns(text) != running) {
            assertThat(System.nanoTime()).as("a process '%s' %s in time", text, running ? "starts" : "ends")
                    .isLessThan(deadline);
            Thread.sleep(100);
        }
    }

    private static boolean processRuns(String text) throws IOException {
        try (Stream<Path> processes = Files.list(Path.of("/proc"))) {
            return processes.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit))
                    .anyMatch(p -> {
                        try {
                            return new String(Files.readAllBytes(p.resolve("cmdline"))).replace('\0', ' ').contains(text);
                        } catch (IOException gone) {
                            return false;
                        }
                    });
        }
    }

    // ------------------------------------------------------------------ helpers

    ChatEngine engine() {
        return ChatEngine.builder().store(new InMemoryChatStore()).runtime(adapter()).build();
    }

    /** A folder holding {@code keep.txt}, for a command that deletes it. */
    Path victim() throws IOException {
        Path victim = hermes().directory("victim");
        Files.writeString(victim.resolve("keep.txt"), "precious");
        return victim;
    }

    static String commandArgs(String command) {
        return "{\"command\": \"" + command.replace("\\", "\\\\").replace("\"", "\\\"") + "\"}";
    }

    static <T> T last(List<T> list) {
        assertThat(list).as("the model was asked").isNotEmpty();
        return list.get(list.size() - 1);
    }

    static String answer(ChatEngine engine, RunTicket ticket) {
        for (Message message : engine.getThread("alice", ticket.threadId()).messages()) {
            if (message.id().equals(ticket.assistantMessageId())) {
                return ((AssistantMessage) message).text();
            }
        }
        throw new AssertionError("no answer " + ticket.assistantMessageId() + " on the active branch");
    }

    static RunTicket awaitSucceeded(ChatEngine engine, RunTicket ticket) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        RunStatus status = engine.state("alice", ticket.runId()).run().status();
        while (status != RunStatus.SUCCEEDED) {
            assertThat(status).as("run %s", ticket.runId()).isIn(RunStatus.QUEUED, RunStatus.RUNNING,
                    RunStatus.WAITING_FOR_INPUT);
            assertThat(System.nanoTime()).as("run %s ends in time", ticket.runId()).isLessThan(deadline);
            Thread.sleep(50);
            status = engine.state("alice", ticket.runId()).run().status();
        }
        return ticket;
    }
}
