package dev.parley.example.plain;

import static dev.parley.example.plain.ConsoleChat.OWNER;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.ApprovalMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.UserMessage;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import dev.parley.chat.testing.openai.OpenAiWire;
import dev.parley.chat.testing.openai.Sse;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The example as a person runs it, against a stub model on loopback that speaks OpenAI's streaming chat completions
 * (the HTTP LangChain4j's OpenAI model really sends and reads) and a real SQLite file: what the console shows,
 * what the model is sent, and what the file holds afterwards.
 */
class ConsoleChatTest extends OpenAiWire {
    private static final String FIRST = "Order 42 arrived broken. Please refund it.";
    private static final String FOLLOW_UP = "Thanks! What exactly did you do for me?";

    @TempDir
    Path dir;

    private Path database;
    private final ByteArrayOutputStream console = new ByteArrayOutputStream();

    @BeforeEach
    void aFreshFile() {
        database = dir.resolve("data").resolve("chat.db");
    }

    @Test
    void aRefundApprovedAtTheConsoleRunsOnceAndTheThreadGoesOnAfterTheRestart() throws IOException {
        replies(Sse.stream().reasoning("The customer ", "wants a refund.")
                        .text("Sorry about that. ", "Let me refund it.")
                        .toolCall(0, "call_1", "refund_order", "{\"order\":", "42}").finish("tool_calls").done(),
                Sse.stream().text("Order 42 is ", "refunded to your card.").finish("stop").done(),
                Sse.stream().text("I refunded ", "order 42.").finish("stop").done());

        int status = run("y\n");

        assertThat(status).isZero();
        String shown = shown();
        assertThat(shown).containsSubsequence(
                "== New thread ",
                "you> " + FIRST,
                "thinking> The customer wants a refund.\n",
                "agent> Sorry about that. Let me refund it.\n",
                "  -> refund_order {\"order\":42}\n",
                "  ? Refund order 42 to the customer's card\n",
                "Allow? [y/N] ",
                "approval answered: allow_once\n",
                "[host] refunding order 42\n",
                "  <- {\"order\":42,\"refunded\":true}\n",
                "agent> Order 42 is refunded to your card.\n",
                "(run succeeded)\n",
                "== Restarted; thread ",
                "  you> " + FIRST + "\n",
                "  agent> Sorry about that. Let me refund it.\n  \n  Order 42 is refunded to your card.\n",
                "    thinking> The customer wants a refund.\n",
                "    -> refund_order {\"order\":42}\n",
                "    ? Refund order 42 to the customer's card: allow_once\n",
                "    <- {\"order\":42,\"refunded\":true}\n",
                "you> " + FOLLOW_UP + "\n",
                "agent> I refunded order 42.\n",
                "(run succeeded)\n");
        assertThat(shown.split("\\[host\\] refunding", -1)).as("the refund ran once").hasSize(2);

        // what the model was sent: the refund's result, and after the restart the conversation as stored
        List<JsonNode> sent = requests();
        assertThat(sent).hasSize(3);
        JsonNode toolResult = sent.get(1).path("messages").get(3);
        assertThat(toolResult.path("role").asText()).isEqualTo("tool");
        assertThat(toolResult.path("content").asText()).isEqualTo("{\"order\":42,\"refunded\":true}");
        JsonNode afterRestart = sent.get(2).path("messages");
        assertThat(afterRestart).extracting(m -> m.path("role").asText())
                .containsExactly("system", "user", "assistant", "tool", "assistant", "user");
        assertThat(afterRestart.get(1).path("content").asText()).isEqualTo(FIRST);
        assertThat(afterRestart.get(4).path("content").asText())
                .isEqualTo("Sorry about that. Let me refund it.\n\nOrder 42 is refunded to your card.");
        assertThat(afterRestart.get(5).path("content").asText()).isEqualTo(FOLLOW_UP);

        // what the SQLite file holds: one thread, both turns, the approved refund and its result
        try (JdbiChatStore store = JdbiChatStore.sqlite(database).build()) {
            ChatThread thread = onlyThread(store);
            assertThat(shown).contains("== New thread " + thread.id() + "\n");
            assertThat(conversation(store, thread)).containsExactly(
                    "user: " + FIRST,
                    "assistant: Sorry about that. Let me refund it.\n\nOrder 42 is refunded to your card.",
                    "user: " + FOLLOW_UP,
                    "assistant: I refunded order 42.");
            List<Run> runs = runs(store, thread);
            assertThat(runs).extracting(Run::status).containsExactly(RunStatus.SUCCEEDED, RunStatus.SUCCEEDED);
            List<Message> steps = store.listStepMessagesAfter(runs.get(0).id(), null, 1_000);
            assertThat(steps).filteredOn(ActionExecutionMessage.class::isInstance).singleElement()
                    .satisfies(m -> assertThat(((ActionExecutionMessage) m).arguments()).isEqualTo("{\"order\":42}"));
            assertThat(steps).filteredOn(ApprovalMessage.class::isInstance).singleElement()
                    .satisfies(m -> assertThat(((ApprovalMessage) m).decision())
                            .isEqualTo(ApprovalDecision.ALLOW_ONCE));
            assertThat(steps).filteredOn(ResultMessage.class::isInstance).singleElement().satisfies(m -> {
                assertThat(((ResultMessage) m).error()).isFalse();
                assertThat(((ResultMessage) m).result()).isEqualTo("{\"order\":42,\"refunded\":true}");
            });
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', textBlock = """
            --approve no, nothing typed | --approve=no | ''       | Allow? no (--approve)
            no typed at the console     | ''           | no\\n    | Allow? [y/N]
            the console closed          | ''           | ''       | Allow? [y/N]
            """)
    void aRefundNotAllowedNeverRunsAndTheModelIsToldSo(String how, String flag, String typed, String asked)
            throws IOException {
        replies(Sse.stream().toolCall(0, "call_1", "refund_order", "{\"order\":42}").finish("tool_calls").done(),
                Sse.stream().text("Understood, no refund.").finish("stop").done(),
                Sse.stream().text("Nothing: you declined the refund.").finish("stop").done());

        int status = flag.isEmpty() ? run(typed.replace("\\n", "\n")) : run(typed, flag);

        assertThat(status).isZero();
        assertThat(shown()).containsSubsequence("  ? Refund order 42 to the customer's card\n", asked,
                "approval answered: deny\n", "  <- error: ", "agent> Understood, no refund.\n", "(run succeeded)\n",
                "== Restarted; thread ", "agent> Nothing: you declined the refund.\n", "(run succeeded)\n");
        assertThat(shown()).doesNotContain("[host] refunding");
        assertThat(requests().get(1).path("messages").get(3).path("role").asText()).isEqualTo("tool");
        try (JdbiChatStore store = JdbiChatStore.sqlite(database).build()) {
            ChatThread thread = onlyThread(store);
            List<Message> steps = store.listStepMessagesAfter(runs(store, thread).get(0).id(), null, 1_000);
            assertThat(steps).filteredOn(ApprovalMessage.class::isInstance).singleElement()
                    .satisfies(m -> assertThat(((ApprovalMessage) m).decision()).isEqualTo(ApprovalDecision.DENY));
            assertThat(steps).filteredOn(ResultMessage.class::isInstance).singleElement()
                    .satisfies(m -> assertThat(((ResultMessage) m).error()).isTrue());
        }
    }

    @Test
    void aModelThatCannotBeReachedEndsTheExampleWithStatusOneAndSaysWhy() throws IOException {
        int closedPort;
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            closedPort = socket.getLocalPort();
        }

        int status = run("", "--base-url", "http://127.0.0.1:" + closedPort + "/v1");

        assertThat(status).isEqualTo(1);
        assertThat(shown()).contains("(run failed: RUNTIME_UNAVAILABLE ").doesNotContain("== Restarted");
    }

    @Test
    void aMessageTheEngineRefusesEndsTheExampleWithStatusOneAndItsReason() {
        int status = run("", "--message", "x".repeat(100_001));

        assertThat(status).isEqualTo(1);
        assertThat(shown()).contains("Parley refused: INVALID_INPUT ").doesNotContain("agent>");
        assertThat(requests()).isEmpty();
    }

    @Test
    void badArgumentsAreRefusedWithTheUsageAndTouchNothing() {
        assertThat(ConsoleChat.run(new String[] {"--approve", "maybe", "--db", database.toString()},
                new ByteArrayInputStream(new byte[0]), printer())).isEqualTo(2);
        assertThat(ConsoleChat.run(new String[] {"--colour", "red"}, new ByteArrayInputStream(new byte[0]), printer()))
                .isEqualTo(2);
        assertThat(ConsoleChat.run(new String[] {"--message", " "}, new ByteArrayInputStream(new byte[0]), printer()))
                .isEqualTo(2);
        assertThat(ConsoleChat.run(new String[] {"--model"}, new ByteArrayInputStream(new byte[0]), printer()))
                .isEqualTo(2);

        assertThat(shown()).contains("--approve takes yes or no, not maybe", "Unknown option: --colour",
                "--message must not be blank", "--model needs a value", "Usage: java -jar parley-plain-java.jar");
        assertThat(database).doesNotExist();
        assertThat(requests()).isEmpty();
    }

    /** The example on the stub model and a fresh SQLite file, {@code typed} at its console. */
    private int run(String typed, String... more) {
        List<String> args = new ArrayList<>(List.of("--base-url", baseUrl(), "--model", "gpt-test",
                "--api-key", "sk-test-key", "--db", database.toString()));
        args.addAll(List.of(more));
        return ConsoleChat.run(args.toArray(String[]::new),
                new ByteArrayInputStream(typed.getBytes(StandardCharsets.UTF_8)), printer());
    }

    private PrintStream printer() {
        return new PrintStream(console, true, StandardCharsets.UTF_8);
    }

    private String shown() {
        return console.toString(StandardCharsets.UTF_8);
    }

    private static ChatThread onlyThread(JdbiChatStore store) {
        List<ChatThread> threads = store.listThreads(OWNER, null, 10);
        assertThat(threads).hasSize(1);
        return threads.get(0);
    }

    private static List<String> conversation(JdbiChatStore store, ChatThread thread) {
        return store.listTopLevelMessages(thread.id(), null, 50).stream()
                .map(m -> m instanceof UserMessage user ? "user: " + user.text()
                        : m instanceof AssistantMessage answer ? "assistant: " + answer.text() : m.kind().toString())
                .toList();
    }

    private static List<Run> runs(JdbiChatStore store, ChatThread thread) {
        return store.findThreadRuns(thread.id(), EnumSet.allOf(RunStatus.class)).stream()
                .sorted(Comparator.comparing(Run::createdAt)).toList();
    }
}
