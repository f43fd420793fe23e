package dev.parley.chat.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.agent.ModelMessage;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionScope;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.BuildTools;
import dev.parley.chat.testing.ScriptedModel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * MCP tools in the agent loop, against real MCP servers from npm: a scripted model calls them through a
 * whole engine, with Parley's approvals.
 */
class McpToolsNodeTest {
    static final String ALICE = "alice";

    @TempDir
    Path dir;
    final InMemoryChatStore store = new InMemoryChatStore();
    final ScriptedModel model = ScriptedTurns.model();

    @BeforeAll
    static void needsNode() {
        BuildTools.assumePresent("node");
    }

    ChatEngine engine(McpTools tools) {
        return ChatEngine.builder().store(store).runtime(AgentLoopRuntime.builder(model).maxIterations(6).build())
                .hostActions(tools).build();
    }

    static String startRun(ChatEngine engine, String owner, String text) {
        String threadId = engine.createThread(owner, NewThread.empty()).id();
        return engine.startRun(owner, threadId, StartRun.of(text)).runId();
    }

    static Run awaitEnd(ChatEngine engine, String owner, String runId) {
        return Await.until(() -> engine.state(owner, runId).run(), r -> r.status().isTerminal(), "the run to end");
    }

    static Run runToEnd(ChatEngine engine, String owner, String text) {
        return awaitEnd(engine, owner, startRun(engine, owner, text));
    }

    static PendingInput awaitApproval(ChatEngine engine, String runId) {
        return Await.until(() -> engine.state(ALICE, runId).pendingInputs(), pending -> !pending.isEmpty(),
                "the approval").get(0);
    }

    List<String> offeredFirst() {
        return model.requests().get(0).tools().stream().map(HostToolSpec::name).toList();
    }

    @Test
    void readOnlyToolsRunWithoutApprovalAndTheirTextStructuredContentAndImagesReachTheModel() {
        try (McpTools tools = McpTools.builder().server(McpTestServers.everything("everything")).build();
                ChatEngine engine = engine(tools)) {
            Run run = runToEnd(engine, ALICE, """
                    everything__echo {"message":"hi"}
                    everything__get-sum {"a":2,"b":3}
                    everything__get-tiny-image {}""");

            assertThat(run.status()).as("nobody answered anything: no approval was asked").isEqualTo(RunStatus.SUCCEEDED);
            List<ModelMessage.ToolResult> results = ScriptedTurns.lastResults(model);
            assertThat(results).extracting(ModelMessage.ToolResult::error).containsExactly(false, false, false);
            assertThat(results.get(0).result()).isEqualTo("Echo: hi");
            assertThat(results.get(1).result()).contains("5");
            assertThat(results.get(2).result()).contains("[image image/png").contains("not shown");
            assertThat(offeredFirst()).contains("everything__echo", "everything__get-sum", "everything__toggle-simulated-logging")
                    .allMatch(name -> name.matches("[a-zA-Z0-9_-]{1,64}"));
            HostToolSpec echo = model.requests().get(0).tools().stream()
                    .filter(t -> t.name().equals("everything__echo")).findFirst().orElseThrow();
            assertThat(echo.parametersSchema()).contains("\"message\"").doesNotContain("$schema");
        }
    }

    @Test
    void aToolNotMarkedReadOnlyAsksFirstAllowedItRunsDeniedItDoesNot() throws Exception {
        try (McpTools tools = McpTools.builder().server(McpTestServers.filesystem("fs", dir)).build();
                ChatEngine engine = engine(tools)) {
            Path allowed = dir.resolve("allowed.txt");
            String runId = startRun(engine, ALICE, "fs__write_file {\"path\":\"" + allowed + "\",\"content\":\"hello\"}");
            PendingInput asked = awaitApproval(engine, runId);
            ApprovalRequest request = (ApprovalRequest) asked.request();
            assertThat(request.toolName()).isEqualTo("fs__write_file");
            assertThat(request.description()).contains("write_file", "MCP server fs", "does not say it only reads");
            assertThat(allowed).as("nothing runs before the answer").doesNotExist();
            engine.answer(ALICE, runId, asked.inputId(), ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE));
            assertThat(awaitEnd(engine, ALICE, runId).status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(Files.readString(allowed)).isEqualTo("hello");
            assertThat(ScriptedTurns.lastResults(model)).singleElement()
                    .satisfies(r -> assertThat(r.result()).contains("Successfully wrote"));

            Path denied = dir.resolve("denied.txt");
            String second = startRun(engine, ALICE, "fs__write_file {\"path\":\"" + denied + "\",\"content\":\"no\"}");
            engine.answer(ALICE, second, awaitApproval(engine, second).inputId(), ApprovalAnswer.of(ApprovalDecision.DENY));
            assertThat(awaitEnd(engine, ALICE, second).status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(denied).doesNotExist();
            assertThat(ScriptedTurns.lastResults(model)).singleElement().satisfies(r -> {
                assertThat(r.error()).isTrue();
                assertThat(r.result()).isEqualTo("the person denied this call of fs__write_file");
            });
        }
    }

    @Test
    void theHostsApprovalsWinOverTheHintsEditedArgumentsRunAndAllowedForTheThreadIsNotAskedAgain() throws Exception {
        McpServer fs = McpTestServers.filesystem("fs", dir).withApproval(McpApproval.oncePerThread())
                .withToolApproval("write_file", McpApproval.always().withEditableArguments());
        Files.writeString(dir.resolve("a.txt"), "A");
        try (McpTools tools = McpTools.builder().server(fs).build(); ChatEngine engine = engine(tools)) {
            Path file = dir.resolve("edited.txt");
            String runId = startRun(engine, ALICE, "fs__write_file {\"path\":\"" + file + "\",\"content\":\"draft\"}");
            PendingInput asked = awaitApproval(engine, runId);
            assertThat(((ApprovalRequest) asked.request()).argumentsEditable()).isTrue();
            engine.answer(ALICE, runId, asked.inputId(), new ApprovalAnswer(ApprovalDecision.ALLOW_ONCE,
                    "{\"path\":\"" + file + "\",\"content\":\"final\"}"));
            assertThat(awaitEnd(engine, ALICE, runId).status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(Files.readString(file)).as("the edited arguments ran").isEqualTo("final");

            String read = "fs__read_text_file {\"path\":\"" + dir.resolve("a.txt") + "\"}";
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            String first = engine.startRun(ALICE, threadId, StartRun.of(read)).runId();
            PendingInput once = awaitApproval(engine, first);
            assertThat(((ApprovalRequest) once.request()).decisions()).contains(ApprovalDecision.ALLOW_FOR_THREAD);
            engine.answer(ALICE, first, once.inputId(), ApprovalAnswer.of(ApprovalDecision.ALLOW_FOR_THREAD));
            assertThat(awaitEnd(engine, ALICE, first).status()).isEqualTo(RunStatus.SUCCEEDED);
            String second = engine.startRun(ALICE, threadId, StartRun.of(read)).runId();
            assertThat(awaitEnd(engine, ALICE, second).status()).as("not asked again in this thread")
                    .isEqualTo(RunStatus.SUCCEEDED);
            assertThat(ScriptedTurns.lastResults(model)).singleElement()
                    .satisfies(r -> assertThat(r.result()).isEqualTo("{\"content\":\"A\"}"));
        }
    }

    @Test
    void aToolsErrorAndABadArgumentAreErrorResultsTheRunGoesOnFrom() throws Exception {
        Files.writeString(dir.resolve("note.txt"), "inside");
        try (McpTools tools = McpTools.builder().server(McpTestServers.filesystem("fs", dir)).build();
                ChatEngine engine = engine(tools)) {
            Run run = runToEnd(engine, ALICE, "fs__read_text_file {\"path\":\"/etc/hostname\"}\n"
                    + "fs__read_text_file {\"nopath\":1}\n"
                    + "fs__read_text_file {\"path\":\"" + dir.resolve("note.txt") + "\"}");
            assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
            List<ModelMessage.ToolResult> results = ScriptedTurns.lastResults(model);
            assertThat(results).extracting(ModelMessage.ToolResult::error).containsExactly(true, true, false);
            assertThat(results.get(0).result()).contains("read_text_file", "fs", "Access denied");
            assertThat(results.get(1).result()).contains("reported an error");
            assertThat(results.get(2).result()).contains("inside");
        }
    }

    @Test
    void aServerKilledMidCallFailsThatCallAndItsProcessIsStartedAgainForTheNextAsAfterAnIdleDeath() throws Exception {
        Path pidFile = dir.resolve("pid");
        McpServer server = McpTestServers.everythingTellingItsPid("ev", pidFile).withCallTimeout(Duration.ofSeconds(30));
        try (McpTools tools = McpTools.builder().server(server).build(); ChatEngine engine = engine(tools)) {
            String runId = startRun(engine, ALICE, """
                    ev__trigger-long-running-operation {"duration":10,"steps":5}
                    ev__echo {"message":"back"}""");
            long pid = Await.until(() -> readPid(pidFile), p -> p > 0, "the server's process id");
            Await.until(() -> store.listStepMessagesAfter(runId, null, 100), steps -> steps.stream().anyMatch(m ->
                    m instanceof ActionExecutionMessage call && call.name().equals("ev__trigger-long-running-operation")),
                    "the call to be made");
            Thread.sleep(1_000);
            long killedAt = System.nanoTime();
            ProcessHandle.of(pid).orElseThrow().destroyForcibly();

            Run run = awaitEnd(engine, ALICE, runId);
            assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(Duration.ofNanos(System.nanoTime() - killedAt)).as("the call failed on the death, not a timeout")
                    .isLessThan(Duration.ofSeconds(8));
            List<ModelMessage.ToolResult> results = ScriptedTurns.lastResults(model);
            assertThat(results.get(0).error()).isTrue();
            assertThat(results.get(0).result()).contains("trigger-long-running-operation");
            assertThat(results.get(1)).satisfies(r -> {
                assertThat(r.error()).isFalse();
                assertThat(r.result()).isEqualTo("Echo: back");
            });
            long restarted = readPid(pidFile);
            assertThat(restarted).as("a new process").isNotEqualTo(pid);

            ProcessHandle idle = ProcessHandle.of(restarted).orElseThrow();
            idle.destroyForcibly();
            idle.onExit().get(10, TimeUnit.SECONDS);
            assertThat(runToEnd(engine, ALICE, "ev__echo {\"message\":\"again\"}").status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(ScriptedTurns.lastResults(model)).singleElement()
                    .satisfies(r -> assertThat(r.result()).as("a process that died idle is started again").isEqualTo("Echo: again"));
            assertThat(readPid(pidFile)).isNotIn(pid, restarted);
        }
    }

    /**
     * The health check finds a stdio server whose process died while idle and starts it again before any call
     * needs it; the next run's call goes to the new process.
     */
    @Test
    void theHealthCheckStartsADeadServerAgainBeforeTheNextCall() throws Exception {
        Path pidFile = dir.resolve("pid");
        try (McpTools tools = McpTools.builder().server(McpTestServers.everythingTellingItsPid("ev", pidFile))
                .healthCheckInterval(Duration.ofMillis(200)).build(); ChatEngine engine = engine(tools)) {
            assertThat(runToEnd(engine, ALICE, "ev__echo {\"message\":\"one\"}").status()).isEqualTo(RunStatus.SUCCEEDED);
            long first = readPid(pidFile);
            ProcessHandle dying = ProcessHandle.of(first).orElseThrow();
            dying.destroyForcibly();
            dying.onExit().get(10, TimeUnit.SECONDS);

            long second = Await.until(() -> readPid(pidFile), pid -> pid > 0 && pid != first,
                    "the health check to start the server again");
            assertThat(ProcessHandle.of(second)).as("running before any call").hasValueSatisfying(
                    process -> assertThat(process.isAlive()).isTrue());
            assertThat(runToEnd(engine, ALICE, "ev__echo {\"message\":\"two\"}").status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(ScriptedTurns.lastResults(model)).singleElement()
                    .satisfies(r -> assertThat(r.result()).isEqualTo("Echo: two"));
            assertThat(readPid(pidFile)).as("the call went to the process the check started").isEqualTo(second);
        }
    }

    @Test
    void aNegativeHealthCheckIntervalIsRefused() {
        assertThatThrownBy(() -> McpTools.builder().healthCheckInterval(Duration.ofSeconds(-1)))
                .isInstanceOf(dev.parley.chat.ChatException.class).hasMessageContaining("must not be negative");
    }

    @Test
    void aCallLongerThanItsTimeoutIsAnErrorResultAndTheServerStaysForTheNextCall() {
        Path pidFile = dir.resolve("pid");
        McpServer server = McpTestServers.everythingTellingItsPid("ev", pidFile).withCallTimeout(Duration.ofSeconds(5));
        try (McpTools tools = McpTools.builder().server(server).build(); ChatEngine engine = engine(tools)) {
            Run run = runToEnd(engine, ALICE, """
                    ev__trigger-long-running-operation {"duration":12,"steps":2}
                    ev__echo {"message":"still here"}""");
            assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
            List<ModelMessage.ToolResult> results = ScriptedTurns.lastResults(model);
            assertThat(results.get(0)).satisfies(r -> {
                assertThat(r.error()).isTrue();
                assertThat(r.result()).contains("the MCP server ev did not answer within 5 s");
            });
            long pid = readPid(pidFile);
            assertThat(results.get(1).result()).isEqualTo("Echo: still here");
            assertThat(readPid(pidFile)).as("the same process: a timeout does not restart it").isEqualTo(pid);
        }
    }

    @Test
    void aServerThatChangesItsToolsIsFollowedAndACallOfAToolItDroppedIsAnError() {
        try (McpTools tools = McpTools.builder().server(McpTestServers.changingTools("ch")).build();
                ChatEngine engine = engine(tools)) {
            Run first = runToEnd(engine, ALICE, "ch__swap {}\nch__old_tool {}");
            assertThat(first.status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(offeredFirst()).containsExactlyInAnyOrder("ch__old_tool", "ch__swap");
            List<ModelMessage.ToolResult> results = ScriptedTurns.lastResults(model);
            assertThat(results.get(0).result()).isEqualTo("swapped");
            assertThat(results.get(1).error()).as("old_tool is gone though the run was offered it").isTrue();
            assertThat(results.get(1).result()).contains("old_tool");

            HostActionScope scope = new HostActionScope(ALICE, "t", "r");
            Await.until(() -> tools.actionsFor(scope).stream().map(a -> a.spec().name()).toList(),
                    names -> names.contains("ch__new_tool") && !names.contains("ch__old_tool"), "the new tool list");
            int before = model.requests().size();
            assertThat(runToEnd(engine, ALICE, "ch__new_tool {}").status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(model.requests().get(before).tools()).extracting(HostToolSpec::name)
                    .containsExactlyInAnyOrder("ch__new_tool", "ch__swap");
            assertThat(ScriptedTurns.lastResults(model)).singleElement()
                    .satisfies(r -> assertThat(r.result()).isEqualTo("new tool ran"));
        }
    }

    @Test
    void streamableHttpWithAHeaderAndAServerThatGoesDownMakesItsToolsFailNotTheRun() throws Exception {
        Path authorizations = dir.resolve("authorizations");
        McpTestServers.HttpServer http = McpTestServers.HttpServer.start(authorizations);
        McpServer web = McpServer.http("web", http.url()).withHeader("Authorization", "Bearer test-token")
                .withCallTimeout(Duration.ofSeconds(10));
        McpServer nowhere = McpServer.http("nowhere", "http://127.0.0.1:9/mcp").withConnectTimeout(Duration.ofSeconds(2));
        try (http; McpTools tools = McpTools.builder().server(web).server(nowhere).connectAtStart(true).build();
                ChatEngine engine = engine(tools)) {
            Run run = runToEnd(engine, ALICE, "web__get-sum {\"a\":2,\"b\":3}");
            assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(ScriptedTurns.lastResults(model)).singleElement().satisfies(r -> {
                assertThat(r.error()).isFalse();
                assertThat(r.result()).contains("5");
            });
            assertThat(offeredFirst()).as("a server never reached offers nothing").allMatch(n -> n.startsWith("web__"));
            assertThat(Files.readAllLines(authorizations)).as("every request carries the header").isNotEmpty()
                    .containsOnly("Bearer test-token");

            http.close();
            Run after = runToEnd(engine, ALICE, "web__echo {\"message\":\"anyone?\"}");
            assertThat(after.status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(ScriptedTurns.lastResults(model)).singleElement().satisfies(r -> {
                assertThat(r.error()).isTrue();
                assertThat(r.result()).startsWith("host action web__echo failed: the MCP server web failed during the call");
            });
        }
    }

    @Test
    void aRunIsOfferedOnlyTheToolsTheHostAllowsItsOwner() {
        McpAccess access = (scope, server, tool) -> scope.ownerId().equals(ALICE) || tool.equals("echo");
        try (McpTools tools = McpTools.builder().server(McpTestServers.everything("everything")).access(access).build();
                ChatEngine engine = engine(tools)) {
            List<String> alices = names(tools.actionsFor(new HostActionScope(ALICE, "t1", "r1")));
            assertThat(alices).contains("everything__echo", "everything__get-sum");
            assertThat(names(tools.actionsFor(new HostActionScope("bob", "t2", "r2"))))
                    .containsExactly("everything__echo");

            Run bobs = runToEnd(engine, "bob", "everything__get-sum {\"a\":1,\"b\":1}");
            assertThat(bobs.status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(offeredFirst()).containsExactly("everything__echo");
            assertThat(ScriptedTurns.lastResults(model)).singleElement().satisfies(r -> {
                assertThat(r.error()).isTrue();
                assertThat(r.result()).contains("no tool named everything__get-sum");
            });
        }
    }

    /**
     * An approval the engine asked outlives its host: after a restart the run still waits for the same
     * approval (nothing is asked again, nothing ran); answered on the next process, the tool runs once and the
     * loop goes on from where it was.
     */
    @Test
    void aRestartWhileAnMcpApprovalWaitsAsksNothingAgainAndRunsTheToolOnceAfterTheAnswer() throws Exception {
        Path file = dir.resolve("after-restart.txt");
        String write = "fs__write_file {\"path\":\"" + file + "\",\"content\":\"once\"}";
        McpTools firstTools = McpTools.builder().server(McpTestServers.filesystem("fs", dir)).build();
        ChatEngine first = engine(firstTools);
        String threadId = first.createThread(ALICE, NewThread.empty()).id();
        String runId = first.startRun(ALICE, threadId, StartRun.of(write)).runId();
        String inputId = awaitApproval(first, runId).inputId();
        first.close();
        firstTools.close();

        try (McpTools tools = McpTools.builder().server(McpTestServers.filesystem("fs", dir)).build();
                ChatEngine second = engine(tools)) {
            assertThat(second.state(ALICE, runId).pendingInputs()).extracting(PendingInput::inputId)
                    .as("the same approval, not asked again").containsExactly(inputId);
            assertThat(file).as("nothing ran before the answer").doesNotExist();
            second.answer(ALICE, runId, inputId, ApprovalAnswer.of(ApprovalDecision.ALLOW_ONCE));
            Run run = awaitEnd(second, ALICE, runId);
            assertThat(run.status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(Files.readString(file)).isEqualTo("once");
            assertThat(store.listStepMessagesAfter(runId, null, 100)).filteredOn(ResultMessage.class::isInstance)
                    .as("one execution, one result").hasSize(1);
            assertThat(store.readEvents(runId, 0, 1_000)).filteredOn(e -> e.type().equals("input_requested"))
                    .as("asked once, by the first process").hasSize(1);
            assertThat(ScriptedTurns.lastResults(model)).singleElement()
                    .satisfies(r -> assertThat(r.result()).contains("Successfully wrote"));
        }
    }

    private static List<String> names(List<HostAction> actions) {
        return actions.stream().map(a -> a.spec().name()).toList();
    }

    private static long readPid(Path file) {
        try {
            String text = Files.exists(file) ? Files.readString(file).strip() : "";
            return text.isEmpty() ? 0 : Long.parseLong(text);
        } catch (java.io.IOException | NumberFormatException e) {
            return 0;
        }
    }
}
