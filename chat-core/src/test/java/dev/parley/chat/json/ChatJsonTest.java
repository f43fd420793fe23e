package dev.parley.chat.json;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.ApprovalRequest;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.ClientToolAnswer;
import dev.parley.chat.input.ClientToolRequest;
import dev.parley.chat.input.InputState;
import dev.parley.chat.model.ActionExecutionMessage;
import dev.parley.chat.model.ApprovalMessage;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.ClarifyMessage;
import dev.parley.chat.model.ErrorInfo;
import dev.parley.chat.model.ErrorMessage;
import dev.parley.chat.model.Feedback;
import dev.parley.chat.model.FeedbackRating;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.MessageKind;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.ResultMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.StatusMessage;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.ThreadStatus;
import dev.parley.chat.model.TodoItem;
import dev.parley.chat.model.TodoMessage;
import dev.parley.chat.model.TodoStatus;
import dev.parley.chat.model.TokenUsage;
import dev.parley.chat.model.UserMessage;
import java.time.Instant;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

class ChatJsonTest {
    private static final Instant AT = Instant.ofEpochMilli(1_764_450_000_123L);
    private final ChatJson json = ChatJson.shared();

    static Stream<Message> everyMessageKind() {
        return Stream.of(
                new UserMessage("m1", "t", "r", null, MessageStatus.COMPLETED, AT, "hello \"world\" ✓"),
                new AssistantMessage("m2", "t", "r", "m1", MessageStatus.FAILED, AT, "partial",
                        new ErrorInfo("RUNTIME_FAILED", "boom"), new TokenUsage(1, 2, 3)),
                new AssistantMessage("m2b", "t", "r", "m1", MessageStatus.IN_PROGRESS, AT, "", null, null),
                new AssistantMessage("m2c", "t", "r", "m1", MessageStatus.COMPLETED, AT, "cut", null, null, true),
                new AssistantMessage("m2d", "t", "r", "m1", MessageStatus.FAILED, AT, "",
                        new ErrorInfo("RATE_LIMITED", "slow down", 20L), null),
                new ThinkingMessage("m3", "t", "r", "m2", MessageStatus.IN_PROGRESS, AT, "hmm"),
                new ActionExecutionMessage("m4", "t", "r", "m2", MessageStatus.COMPLETED, AT, "x1", "search",
                        "{\"q\":\"rain\"}"),
                new ResultMessage("m5", "t", "r", "m2", MessageStatus.COMPLETED, AT, "x1", "search", "sunny", true),
                new StatusMessage("m6", "t", "r", "m2", MessageStatus.COMPLETED, AT, "warn", "slow"),
                new TodoMessage("m7", "t", "r", "m2", MessageStatus.IN_PROGRESS, AT, List.of(
                        new TodoItem("1", "a", TodoStatus.PENDING, null),
                        new TodoItem("2", "b", TodoStatus.IN_PROGRESS, "1"),
                        new TodoItem("3", "c", TodoStatus.COMPLETED, null),
                        new TodoItem("4", "d", TodoStatus.CANCELLED, "1"))),
                new ClarifyMessage("m8", "t", "r", "m2", MessageStatus.COMPLETED, AT, "c1", "which?",
                        List.of("a", "b"), true, List.of("a", "b")),
                new ApprovalMessage("m8b", "t", "r", "m2", MessageStatus.IN_PROGRESS, AT, "a1",
                        new ApprovalRequest("shell", "{\"cmd\":\"rm -rf build\"}", "Deletes the build folder",
                                List.of(ApprovalDecision.ALLOW_FOR_THREAD, ApprovalDecision.ALWAYS_ALLOW), true),
                        null, null, null),
                new ApprovalMessage("m8c", "t", "r", "m2", MessageStatus.COMPLETED, AT, "a2",
                        ApprovalRequest.of("refund", "{}", "Refunds"), InputState.ANSWERED, ApprovalDecision.ALLOW_ONCE,
                        "{\"order\":1}"),
                new ErrorMessage("m9", "t", "r", "m2", MessageStatus.COMPLETED, AT, "X", "bad"));
    }

    static Stream<AgentStreamEvent> everyEventKind() {
        return Stream.of(
                new AgentStreamEvent.RunStarted("t", "r", "a"),
                new AgentStreamEvent.RuntimeSession("s-1", true),
                new AgentStreamEvent.MessagesSnapshot("t", "r", everyMessageKind().collect(Collectors.toList()), "nope"),
                new AgentStreamEvent.MessagesSnapshot(null, null, List.of(), null),
                new AgentStreamEvent.TextDelta("a", "tok"),
                new AgentStreamEvent.TextFinal("a", "all"),
                new AgentStreamEvent.ThinkingDelta("th", "hm"),
                new AgentStreamEvent.ToolCallStart("c", "x", "search", "{"),
                new AgentStreamEvent.ToolCallArgs("x", "}"),
                new AgentStreamEvent.ToolCallEnd("x"),
                new AgentStreamEvent.ToolCallResult("rm", "x", "ok", false),
                new AgentStreamEvent.TodosUpdated("todo", List.of(new TodoItem("1", "a", TodoStatus.PENDING, null))),
                new AgentStreamEvent.StatusUpdate("s", "lifecycle", "go"),
                new AgentStreamEvent.ClarifyRequested("q", "c1", "?", List.of("y", "n"), false, "12"),
                new AgentStreamEvent.ClarifyResolved("c1", AgentStreamEvent.ClarifyOutcome.CANCELLED, List.of()),
                new AgentStreamEvent.ClarifyResolved("c1", AgentStreamEvent.ClarifyOutcome.ANSWERED, List.of("y")),
                new AgentStreamEvent.InputRequested("q", "c2", new ClarifyRequest("?", List.of("y"), true), AT, "13"),
                new AgentStreamEvent.InputRequested("ap", "a1", new ApprovalRequest("shell", "{}", "Runs it",
                        List.of(ApprovalDecision.DENY), true), null, null),
                new AgentStreamEvent.InputRequested("c", "k1", new ClientToolRequest("x", "pick", "{}", "{}"), AT, null),
                new AgentStreamEvent.InputResolved("c2", AgentStreamEvent.InputOutcome.ANSWERED,
                        new ClarifyAnswer(List.of("y"))),
                new AgentStreamEvent.InputResolved("a1", AgentStreamEvent.InputOutcome.ANSWERED,
                        new ApprovalAnswer(ApprovalDecision.ALLOW_ONCE, "{\"x\":1}")),
                new AgentStreamEvent.InputResolved("k1", AgentStreamEvent.InputOutcome.ANSWERED,
                        new ClientToolAnswer("{}", false)),
                new AgentStreamEvent.InputResolved("a1", AgentStreamEvent.InputOutcome.EXPIRED, null),
                new AgentStreamEvent.Usage(5, 6, 11),
                new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "stop"),
                new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null),
                new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null, true),
                new AgentStreamEvent.RunFailed("RUNTIME_FAILED", "boom"),
                new AgentStreamEvent.RunFailed("RATE_LIMITED", "slow down", 20L));
    }

    @ParameterizedTest
    @MethodSource("everyMessageKind")
    void messagesRoundTripWithTheirDiscriminator(Message message) {
        String text = json.write(message);
        assertThat(json.readTree(text).get("type").asText()).isEqualTo(message.kind().wireName());
        assertThat(json.readMessage(text)).isEqualTo(message);
    }

    @Test
    void everyMessageKindIsCovered() {
        Set<MessageKind> covered = everyMessageKind().map(Message::kind).collect(Collectors.toSet());
        assertThat(covered).isEqualTo(EnumSet.allOf(MessageKind.class));
    }

    @ParameterizedTest
    @MethodSource("everyEventKind")
    void eventsRoundTripAloneAndInsideARunEvent(AgentStreamEvent event) {
        String text = json.write(event);
        assertThat(json.readTree(text).get("type").asText()).isEqualTo(event.type());
        assertThat(json.readEvent(text)).isEqualTo(event);

        RunEvent logged = new RunEvent("r", 42, 1_764_450_000_000L, event);
        assertThat(json.readRunEvent(json.write(logged))).isEqualTo(logged);
    }

    @Test
    void everyEventKindIsCovered() {
        Set<Class<?>> covered = everyEventKind().map(Object::getClass).collect(Collectors.toSet());
        Set<Class<?>> all = Stream.of(AgentStreamEvent.class.getPermittedSubclasses())
                .filter(c -> c != AgentStreamEvent.Unknown.class)
                .collect(Collectors.toSet());
        assertThat(covered).isEqualTo(all);
    }

    @Test
    void inputKindsAndDecisionsAreWrittenAsTheirWireNames() {
        JsonNode requested = json.readTree(json.write(new AgentStreamEvent.InputRequested("m", "a1",
                new ApprovalRequest("shell", "{}", "Runs it", List.of(ApprovalDecision.ALLOW_FOR_THREAD), true), AT,
                null)));
        assertThat(requested.get("type").asText()).isEqualTo("input_requested");
        assertThat(requested.get("request").get("kind").asText()).isEqualTo("approval");
        assertThat(requested.get("request").get("decisions")).extracting(JsonNode::asText)
                .containsExactly("allow_once", "allow_for_thread", "deny");
        assertThat(requested.get("deadline").asLong()).isEqualTo(AT.toEpochMilli());
        JsonNode resolved = json.readTree(json.write(new AgentStreamEvent.InputResolved("k1",
                AgentStreamEvent.InputOutcome.ANSWERED, new ClientToolAnswer("42", false))));
        assertThat(resolved.get("answer").get("kind").asText()).isEqualTo("client_tool");
        assertThat(resolved.get("outcome").asText()).isEqualTo("ANSWERED");
    }

    @Test
    void theWireFormatIsStable() {
        assertThat(json.readTree(json.write(new AgentStreamEvent.TextDelta("a", "x"))))
                .isEqualTo(json.readTree("{\"type\":\"text_delta\",\"messageId\":\"a\",\"delta\":\"x\"}"));
        assertThat(json.readTree(json.write(new RunEvent("r", 3, 7, new AgentStreamEvent.ToolCallEnd("x")))))
                .isEqualTo(json.readTree(
                        "{\"runId\":\"r\",\"seq\":3,\"timestamp\":7,\"event\":{\"type\":\"tool_call_end\",\"executionId\":\"x\"}}"));
        JsonNode user = json.readTree(json.write(new UserMessage("u", "t", "r", null, MessageStatus.COMPLETED, AT, "hi")));
        assertThat(user.get("createdAt").asLong()).isEqualTo(AT.toEpochMilli());
        assertThat(user.has("parentMessageId")).as("null fields are left out").isFalse();
    }

    @Test
    void aTruncatedMarkIsWrittenOnlyWhenSetAndOlderJsonReadsWithoutIt() {
        AssistantMessage whole = new AssistantMessage("a", "t", "r", null, MessageStatus.COMPLETED, AT, "done", null, null);
        assertThat(json.readTree(json.write(whole)).has("truncated")).isFalse();
        assertThat(json.readTree(json.write(new AssistantMessage("a", "t", "r", null, MessageStatus.COMPLETED, AT,
                "cut", null, null, true))).get("truncated").asBoolean()).isTrue();
        assertThat(json.readEvent("{\"type\":\"run_finished\",\"status\":\"SUCCEEDED\"}"))
                .isEqualTo(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null, false));
        assertThat(json.readTree(json.write(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null))))
                .isEqualTo(json.readTree("{\"type\":\"run_finished\",\"status\":\"SUCCEEDED\"}"));
        assertThat(json.write(new AgentStreamEvent.RunFinished(RunStatus.SUCCEEDED, null, true))).contains("\"truncated\":true");
        assertThatThrownBy(() -> new AgentStreamEvent.RunFinished(RunStatus.CANCELLED, "stop", true))
                .isInstanceOf(IllegalArgumentException.class);
        AssistantMessage older = (AssistantMessage) json.readMessage("{\"type\":\"assistant\",\"id\":\"a\","
                + "\"threadId\":\"t\",\"runId\":\"r\",\"status\":\"COMPLETED\",\"createdAt\":1,\"text\":\"x\","
                + "\"error\":{\"code\":\"RUNTIME_FAILED\",\"message\":\"m\"}}");
        assertThat(older.truncated()).isFalse();
        assertThat(older.error()).isEqualTo(new ErrorInfo("RUNTIME_FAILED", "m", null));
    }

    @Test
    void unknownFieldsAreIgnored() {
        AgentStreamEvent event = json.readEvent(
                "{\"type\":\"text_delta\",\"messageId\":\"a\",\"delta\":\"x\",\"addedInV9\":{\"deep\":[1]}}");
        assertThat(event).isEqualTo(new AgentStreamEvent.TextDelta("a", "x"));
        Message message = json.readMessage("{\"type\":\"user\",\"id\":\"u\",\"threadId\":\"t\",\"runId\":\"r\","
                + "\"status\":\"COMPLETED\",\"createdAt\":5,\"text\":\"hi\",\"reactions\":[{\"emoji\":\"x\"}]}");
        assertThat(message).isEqualTo(new UserMessage("u", "t", "r", null, MessageStatus.COMPLETED,
                Instant.ofEpochMilli(5), "hi"));
    }

    @Test
    void aUserMessageListsItsAttachmentsOnlyWhenItHasSome() {
        UserMessage plain = new UserMessage("u", "t", "r", null, MessageStatus.COMPLETED, Instant.ofEpochMilli(5), "hi");
        assertThat(json.write(plain)).doesNotContain("attachments");
        UserMessage withFiles = new UserMessage("u", "t", "r", null, MessageStatus.COMPLETED, Instant.ofEpochMilli(5),
                "look", null, List.of(new dev.parley.chat.model.MessageAttachment("f", "cat.png", "image/png", 42)));
        String written = json.write(withFiles);
        assertThat(written).contains("\"attachments\":[{\"id\":\"f\",\"name\":\"cat.png\","
                + "\"mediaType\":\"image/png\",\"size\":42}]");
        assertThat(json.readMessage(written)).isEqualTo(withFiles);
    }

    @Test
    void unknownEventKindsAreKeptAndWrittenBackUnchanged() {
        String raw = "{\"type\":\"image_delta\",\"messageId\":\"a\",\"bytes\":\"AAEC\",\"n\":[1,2]}";
        AgentStreamEvent event = json.readEvent(raw);
        assertThat(event).isInstanceOf(AgentStreamEvent.Unknown.class);
        assertThat(event.type()).isEqualTo("image_delta");
        assertThat(json.readTree(json.write(event))).isEqualTo(json.readTree(raw));

        RunEvent logged = json.readRunEvent("{\"runId\":\"r\",\"seq\":1,\"timestamp\":2,\"event\":" + raw + "}");
        assertThat(logged.type()).isEqualTo("image_delta");
        assertThat(json.readTree(json.write(logged)).get("event")).isEqualTo(json.readTree(raw));
    }

    @Test
    void unknownMessageKindsInAListAreDropped() {
        List<Message> messages = json.readMessages("[{\"type\":\"image\",\"id\":\"i\",\"url\":\"x\"},"
                + "{\"type\":\"user\",\"id\":\"u\",\"threadId\":\"t\",\"runId\":\"r\",\"status\":\"COMPLETED\","
                + "\"createdAt\":5,\"text\":\"hi\"}]");
        assertThat(messages).extracting(Message::id).containsExactly("u");

        AgentStreamEvent snapshot = json.readEvent("{\"type\":\"messages\",\"messages\":[{\"type\":\"video\"}]}");
        assertThat(((AgentStreamEvent.MessagesSnapshot) snapshot).messages()).isEmpty();
    }

    @Test
    void malformedInputIsAnInvalidInputError() {
        assertThatThrownBy(() -> json.readEvent("{not json"))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT));
        assertThatThrownBy(() -> json.readEvent("{\"type\":\"text_delta\",\"delta\":\"x\"}"))
                .as("a required field is missing")
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT));
        assertThatThrownBy(() -> json.readEvent("{\"delta\":\"x\"}"))
                .as("no type")
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT));
        assertThatThrownBy(() -> json.readRunEvent("{\"runId\":\"r\",\"seq\":0,\"timestamp\":1,\"event\":{\"type\":\"tool_call_end\",\"executionId\":\"x\"}}"))
                .as("seq starts at 1")
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT));
        assertThatThrownBy(() -> json.readMessage("{\"type\":\"hologram\",\"id\":\"h\"}"))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT));
    }

    @Test
    void threadsRunsAndFeedbackRoundTrip() {
        ChatThread thread = new ChatThread("t", "owner", "title", "sess", "model", "skill", ThreadStatus.ARCHIVED, AT, AT);
        assertThat(json.read(json.write(thread), ChatThread.class)).isEqualTo(thread);

        Run run = new Run("r", "t", "owner", RunStatus.FAILED, "u", "a", "hi", "m", "s", 7,
                Map.of("page", "notes", "ids", List.of(1, 2)), AT, AT, AT, new ErrorInfo("X", "y"),
                new TokenUsage(1, 1, 2), "guard");
        Run back = json.read(json.write(run), Run.class);
        assertThat(back).isEqualTo(run);
        assertThat(json.readTree(json.write(run)).has("regeneration")).as("derived getters are not written").isFalse();

        Feedback feedback = new Feedback("t", "r", "a", "owner", FeedbackRating.DOWN, "wrong", AT);
        assertThat(json.read(json.write(feedback), Feedback.class)).isEqualTo(feedback);
    }
}
