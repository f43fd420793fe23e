package dev.parley.chat.spring;

import static dev.parley.chat.testing.ScriptedModel.Reply.reply;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.agent.ModelMessage;
import dev.parley.chat.agent.ModelRequest;
import dev.parley.chat.engine.ApprovalPolicy;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.mcp.McpAccess;
import dev.parley.chat.mcp.McpTools;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.ScriptedModel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

/**
 * {@code parley.mcp.*}: the MCP tools bean, its tools offered by the engine, and the start-up failures of a
 * wrong configuration. The real server is {@link JavaMcpServer}, a child JVM (no Node.js needed).
 */
class ParleyMcpAutoConfigurationTest {
    private final ScriptedModel model = ScriptedModel.choosing(ParleyMcpAutoConfigurationTest::next);
    private final ApplicationContextRunner runner = new ApplicationContextRunner()
            .withConfiguration(AutoConfigurations.of(ParleyMcpAutoConfiguration.class, ParleyAutoConfiguration.class))
            .withBean(RuntimeAdapter.class, () -> AgentLoopRuntime.builder(model).maxIterations(4).build());

    @TempDir
    Path dir;

    /** The person's message is one tool call, {@code <tool> <arguments>}, or plain text; then the model says "done". */
    private static ScriptedModel.Reply next(ModelRequest request) {
        ModelMessage last = request.messages().get(request.messages().size() - 1);
        if (last instanceof ModelMessage.User user && user.text().contains("__")) {
            String[] call = user.text().split(" ", 2);
            return reply().completeToolCall("call-1", call[0], call.length > 1 ? call[1] : "{}");
        }
        return reply().text("done");
    }

    private static Run run(ChatEngine engine, String text) {
        String thread = engine.createThread("alice", NewThread.empty()).id();
        String runId = engine.startRun("alice", thread, StartRun.of(text)).runId();
        return Await.until(() -> engine.state("alice", runId).run(), r -> r.status().isTerminal(), "the run to end");
    }

    private List<String> offered(int request) {
        return model.requests().get(request).tools().stream().map(HostToolSpec::name).toList();
    }

    private List<String> javaServer(String name) throws Exception {
        List<String> line = JavaMcpServer.commandLine(dir);
        List<String> properties = new ArrayList<>();
        properties.add("parley.mcp.servers[0].name=" + name);
        properties.add("parley.mcp.servers[0].command=" + line.get(0));
        for (int i = 1; i < line.size(); i++) {
            properties.add("parley.mcp.servers[0].args[" + (i - 1) + "]=" + line.get(i));
        }
        return properties;
    }

    @Test
    void withoutServersThereIsNoMcpToolsBeanAndTheEngineIsAsBefore() {
        runner.run(context -> {
            assertThat(context).hasNotFailed().doesNotHaveBean(McpTools.class).hasSingleBean(ChatEngine.class);
            assertThat(context).doesNotHaveBean(ParleyMcpProperties.class);
        });
    }

    @Test
    void withoutChatMcpOnTheClasspathServersAreIgnored() {
        runner.withClassLoader(new FilteredClassLoader(McpTools.class))
                .withPropertyValues("parley.mcp.servers[0].name=nowhere", "parley.mcp.servers[0].url=http://127.0.0.1:9/mcp")
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(McpTools.class)
                        .hasSingleBean(ChatEngine.class));
    }

    @Test
    void aConfiguredServersToolsReachTheEngineAndRunUnderTheirApprovals() throws Exception {
        runner.withPropertyValues(javaServer("local").toArray(String[]::new))
                .withPropertyValues("parley.mcp.servers[0].tools[0].name=erase",
                        "parley.mcp.servers[0].tools[0].approval=once-per-thread",
                        "parley.mcp.servers[0].tools[0].editable-arguments=true")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(McpTools.class);
                    ChatEngine engine = context.getBean(ChatEngine.class);

                    Run echoed = run(engine, "local__echo {\"message\":\"hi\"}");
                    assertThat(echoed.status()).as("echo is read-only: nobody was asked").isEqualTo(RunStatus.SUCCEEDED);
                    assertThat(offered(0)).containsExactly("local__echo", "local__erase");
                    ModelMessage.ToolResult result = (ModelMessage.ToolResult) model.requests().get(1).messages()
                            .get(model.requests().get(1).messages().size() - 1);
                    assertThat(result.result()).isEqualTo("Echo: hi");

                    String thread = engine.createThread("alice", NewThread.empty()).id();
                    String runId = engine.startRun("alice", thread, StartRun.of("local__erase {}")).runId();
                    PendingInput asked = Await.until(() -> engine.state("alice", runId).pendingInputs(),
                            pending -> !pending.isEmpty(), "the approval").get(0);
                    ApprovalRequest request = (ApprovalRequest) asked.request();
                    assertThat(request.toolName()).isEqualTo("local__erase");
                    assertThat(request.decisions()).as("once per thread: the person may allow it for the thread")
                            .contains(ApprovalDecision.ALLOW_FOR_THREAD);
                    assertThat(request.argumentsEditable()).isTrue();
                    engine.cancel("alice", runId);
                });
    }

    @Test
    void closingTheContextEndsTheServersProcess() throws Exception {
        List<ProcessHandle> started = new ArrayList<>();
        runner.withPropertyValues(javaServer("local").toArray(String[]::new))
                .withPropertyValues("parley.mcp.connect-at-start=true")
                .run(context -> {
                    assertThat(context).hasNotFailed();
                    started.addAll(serverProcesses());
                });
        assertThat(started).as("the server was started at start-up").isNotEmpty();
        Await.until(() -> started.stream().noneMatch(ProcessHandle::isAlive), ended -> ended,
                "the server's process to end");
    }

    private static List<ProcessHandle> serverProcesses() {
        return ProcessHandle.current().descendants()
                .filter(p -> p.info().arguments().map(a -> List.of(a).contains(JavaMcpServer.class.getName()))
                        .orElse(false))
                .toList();
    }

    @Test
    void allowAndDenyListsAndTheHostsAccessDecideWhichToolsARunGets() throws Exception {
        McpAccess notBob = (scope, server, tool) -> !scope.ownerId().equals("bob");
        runner.withPropertyValues(javaServer("local").toArray(String[]::new))
                .withPropertyValues("parley.mcp.servers[0].deny=erase")
                .withBean(McpAccess.class, () -> notBob)
                .run(context -> {
                    ChatEngine engine = context.getBean(ChatEngine.class);
                    assertThat(run(engine, "hello").status()).isEqualTo(RunStatus.SUCCEEDED);
                    assertThat(offered(0)).containsExactly("local__echo");
                    String thread = engine.createThread("bob", NewThread.empty()).id();
                    String runId = engine.startRun("bob", thread, StartRun.of("hello")).runId();
                    Await.until(() -> engine.state("bob", runId).run(), r -> r.status().isTerminal(), "bob's run");
                    assertThat(offered(1)).isEmpty();
                });
        runner.withPropertyValues(javaServer("local").toArray(String[]::new))
                .withPropertyValues("parley.mcp.servers[0].allow=erase")
                .run(context -> {
                    assertThat(run(context.getBean(ChatEngine.class), "hello").status()).isEqualTo(RunStatus.SUCCEEDED);
                    assertThat(offered(2)).containsExactly("local__erase");
                });
    }

    @Test
    void aServerThatCannotBeReachedOffersNothingAndRunsGoOn() {
        runner.withPropertyValues("parley.mcp.servers[0].name=missing",
                        "parley.mcp.servers[0].command=/nonexistent/mcp-server",
                        "parley.mcp.servers[0].connect-timeout=2s",
                        "parley.mcp.servers[1].name=nowhere",
                        "parley.mcp.servers[1].url=http://127.0.0.1:9/mcp",
                        "parley.mcp.servers[1].headers.Authorization=Bearer x",
                        "parley.mcp.servers[1].connect-timeout=2s",
                        "parley.mcp.connect-at-start=true",
                        "parley.mcp.max-result-chars=500")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(McpTools.class);
                    assertThat(run(context.getBean(ChatEngine.class), "hello").status()).isEqualTo(RunStatus.SUCCEEDED);
                    assertThat(offered(0)).isEmpty();
                });
    }

    @Test
    void propertiesBindAsWritten() {
        runner.withPropertyValues("parley.mcp.servers[0].name=gh_tools",
                        "parley.mcp.servers[0].command=npx",
                        "parley.mcp.servers[0].args=-y,@modelcontextprotocol/server-github",
                        "parley.mcp.servers[0].env.GITHUB_TOKEN=t",
                        "parley.mcp.servers[0].approval=ALWAYS",
                        "parley.mcp.servers[0].tools[0].name=get_issue",
                        "parley.mcp.servers[0].tools[0].approval=never")
                .run(context -> {
                    ParleyMcpProperties.Server server = context.getBean(ParleyMcpProperties.class).getServers().get(0);
                    assertThat(server.getName()).isEqualTo("gh_tools");
                    assertThat(server.getArgs()).containsExactly("-y", "@modelcontextprotocol/server-github");
                    assertThat(server.getEnv()).containsEntry("GITHUB_TOKEN", "t");
                    assertThat(server.getApproval()).isEqualTo(ApprovalPolicy.ALWAYS);
                    assertThat(server.getTools().get(0).getApproval()).isEqualTo(ApprovalPolicy.NEVER);
                });
    }

    @Test
    void aWrongConfigurationFailsTheStartNamingTheProperty() {
        String s = "parley.mcp.servers[0].";
        failsWith("parley.mcp.servers[0].name must be 1 to 32 letters", s + "command=npx");
        failsWith("parley.mcp.servers[0].name must be 1 to 32 letters", s + "name=has space", s + "command=npx");
        failsWith("parley.mcp.servers[0] (a) needs either a command (stdio) or a url", s + "name=a");
        failsWith("parley.mcp.servers[0] (a) needs either a command (stdio) or a url (streamable HTTP), not both",
                s + "name=a", s + "command=npx", s + "url=http://localhost/mcp");
        failsWith("parley.mcp.servers[0] (a).url must be an http or https URL, got 'not a url'",
                s + "name=a", s + "url=not a url");
        failsWith("parley.mcp.servers[0] (a).url must be an http or https URL, got 'ftp://x/mcp'",
                s + "name=a", s + "url=ftp://x/mcp");
        failsWith("parley.mcp.servers[1].name: another server is named 'a'",
                s + "name=a", s + "command=npx", "parley.mcp.servers[1].name=a", "parley.mcp.servers[1].command=npx");
        failsWith("parley.mcp.servers[0].tools[0].approval is missing",
                s + "name=a", s + "command=npx", s + "tools[0].name=x");
        failsWith("parley.mcp.servers[0] (a).editable-arguments needs parley.mcp.servers[0].approval",
                s + "name=a", s + "command=npx", s + "editable-arguments=true");
        failsWith("parley.mcp.servers[0] (a): MCP server a: timeouts must be positive",
                s + "name=a", s + "command=npx", s + "call-timeout=0s");
        failsWith("parley.mcp.max-result-chars must be positive", s + "name=a", s + "command=npx",
                "parley.mcp.max-result-chars=0");
        failsWith("parley.mcp.health-check-interval must be zero (off) or positive, got PT-1S", s + "name=a",
                s + "command=npx", "parley.mcp.health-check-interval=-1s");
        runner.withPropertyValues(s + "name=a", s + "command=npx", s + "approval=sometimes")
                .run(context -> assertThat(context).getFailure().as("Spring's binding error, which its failure analyzer"
                                + " turns into a report naming the property and the values it takes")
                        .hasStackTraceContaining("Failed to bind properties under 'parley.mcp.servers[0].approval'"));
    }

    private void failsWith(String message, String... properties) {
        runner.withPropertyValues(properties).run(context -> {
            assertThat(context).hasFailed();
            assertThat(context).getFailure().rootCause().isInstanceOf(ChatException.class)
                    .hasMessageContaining(message)
                    .satisfies(e -> assertThat(((ChatException) e).code()).isEqualTo(ErrorCode.CONFIGURATION));
        });
    }
}
