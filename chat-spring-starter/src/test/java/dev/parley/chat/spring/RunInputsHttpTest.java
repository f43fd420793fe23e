package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.spring.HttpSupport.Reply;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Pending inputs over real HTTP: the state lists them with their kind, {@code POST /runs/{id}/inputs/{inputId}}
 * answers each kind once, wrong shapes are {@code 400} and change nothing, and {@code clientTools} go with
 * new runs and regenerated ones.
 */
@LoopbackHttpTest
class RunInputsHttpTest {
    private static final String ALICE = "inputs-alice";
    private static final String MALLORY = "inputs-mallory";
    private static final Map<String, Object> LOCAL_TIME = Map.of("name", "get_local_time",
            "description", "The person's local time and time zone",
            "parameters", Map.of("type", "object", "properties", Map.of("zone", Map.of("type", "string"))));

    @LocalServerPort
    int port;

    HttpSupport http;

    @BeforeEach
    void client() {
        http = new HttpSupport(port);
    }

    private Reply answer(String owner, String runId, String inputId, String body) {
        return http.post(owner, "/api/chat/runs/" + runId + "/inputs/" + inputId, body);
    }

    /** Starts a run and waits until it waits for one input; that input as the state lists it. */
    private JsonNode waitingInput(String runId) throws InterruptedException {
        JsonNode inputs = http.awaitState(ALICE, runId, "WAITING_FOR_INPUT").get("pendingInputs");
        assertThat(inputs).hasSize(1);
        return inputs.get(0);
    }

    private String assistantText(String sessionId, String runId) {
        for (JsonNode message : http.get(ALICE, "/api/chat/sessions/" + sessionId).json().get("messages")) {
            if (message.get("type").asText().equals("assistant") && message.get("runId").asText().equals(runId)) {
                return message.get("text").asText();
            }
        }
        throw new AssertionError("no answer for run " + runId);
    }

    /** The first message of {@code type} of the run, as the session's view shows it (steps included). */
    private JsonNode stepOf(String sessionId, String runId, String type) {
        JsonNode view = http.get(ALICE, "/api/chat/sessions/" + sessionId).json();
        for (JsonNode message : view.get("messages")) {
            if (message.get("type").asText().equals(type) && message.get("runId").asText().equals(runId)) {
                return message;
            }
        }
        throw new AssertionError("no " + type + " message for run " + runId + " in " + view);
    }

    private void assertProblem(Reply reply, int status, String code) {
        assertThat(reply.status()).as(reply.body()).isEqualTo(status);
        assertThat(reply.contentType()).startsWith("application/problem+json");
        assertThat(reply.json().get("code").asText()).isEqualTo(code);
    }

    @Test
    void theStateListsEveryPendingInputWithItsKind() throws Exception {
        String session = http.newSession(ALICE);
        String clarify = http.startRun(ALICE, session, "clarify please").get("runId").asText();
        JsonNode question = waitingInput(clarify);
        assertThat(question.get("kind").asText()).isEqualTo("clarify");
        assertThat(question.get("inputId").asText()).isEqualTo("ask-1");
        assertThat(question.get("runId").asText()).isEqualTo(clarify);
        assertThat(question.get("request").get("question").asText()).isEqualTo("Which city?");
        assertThat(question.get("request").get("choices")).extracting(JsonNode::asText).containsExactly("Paris", "Rome");
        assertThat(question.has("messageId") && question.has("createdAt")).isTrue();
        assertThat(question.has("resumeToken")).as("the runtime's position stays on the server").isFalse();
        JsonNode state = http.awaitState(ALICE, clarify, "WAITING_FOR_INPUT");
        assertThat(state.get("pendingInputs")).hasSize(1);
        assertThat(state.has("pendingClarifies")).as("one list of what waits, of every kind").isFalse();
        http.post(ALICE, "/api/chat/runs/" + clarify + "/cancel", null);
        http.awaitState(ALICE, clarify, "CANCELLED");

        String approval = http.startRun(ALICE, session, "refund {\"order\":1}").get("runId").asText();
        JsonNode asked = waitingInput(approval);
        assertThat(asked.get("kind").asText()).isEqualTo("approval");
        JsonNode request = asked.get("request");
        assertThat(request.get("kind").asText()).isEqualTo("approval");
        assertThat(request.get("toolName").asText()).isEqualTo("refund_order");
        assertThat(request.get("arguments").asText()).isEqualTo("{\"order\":1}");
        assertThat(request.get("description").asText()).isEqualTo("Refunds {\"order\":1}; this cannot be undone");
        assertThat(request.get("decisions")).extracting(JsonNode::asText).containsExactly("allow_once", "deny");
        assertThat(request.get("argumentsEditable").asBoolean()).isTrue();
        assertThat(asked.has("deadline")).as("this approval waits as long as the run").isFalse();
        http.post(ALICE, "/api/chat/runs/" + approval + "/cancel", null);
        http.awaitState(ALICE, approval, "CANCELLED");

        String tool = http.startRun(ALICE, session, Map.of("message", "client tool get_local_time",
                "clientTools", List.of(LOCAL_TIME))).get("runId").asText();
        JsonNode call = waitingInput(tool);
        assertThat(call.get("kind").asText()).isEqualTo("client_tool");
        assertThat(call.get("request").get("toolName").asText()).isEqualTo("get_local_time");
        assertThat(call.get("request").get("executionId").asText()).isEqualTo("call-1");
        assertThat(call.get("request").get("arguments").asText()).isEqualTo("{\"zone\":\"local\"}");
        assertThat(http.get(ALICE, "/api/chat/runs/" + tool + "/state").json().get("run").get("status").asText())
                .isEqualTo("WAITING_FOR_INPUT");
        assertThat(call.get("request").get("parameters").asText()).contains("\"zone\"");
        assertThat(call.get("deadline").asLong()).as("the engine's client-tool timeout")
                .isGreaterThan(call.get("createdAt").asLong());
        http.post(ALICE, "/api/chat/runs/" + tool + "/cancel", null);
        http.awaitState(ALICE, tool, "CANCELLED");
    }

    @Test
    void aClarifyIsAnsweredWithAListOrATextOnceAndResumeStillWorks() throws Exception {
        String session = http.newSession(ALICE);
        String runId = http.startRun(ALICE, session, "clarify please").get("runId").asText();
        waitingInput(runId);
        Reply accepted = answer(ALICE, runId, "ask-1", "{\"answer\":[\"Rome\"]}");
        assertThat(accepted.status()).as(accepted.body()).isEqualTo(200);
        assertThat(accepted.json().get("replayed").asBoolean()).isFalse();
        http.awaitState(ALICE, runId, "SUCCEEDED");
        assertThat(assistantText(session, runId)).isEqualTo("You chose Rome.");

        assertThat(answer(ALICE, runId, "ask-1", "{\"answer\":\"Rome\",\"kind\":\"clarify\"}").json().get("replayed")
                .asBoolean()).isTrue();
        assertThat(http.post(ALICE, "/api/chat/runs/" + runId + "/resume", "{\"clarifyId\":\"ask-1\",\"answer\":\"Rome\"}")
                .json().get("replayed").asBoolean()).as("the older endpoint, the same answer").isTrue();
        assertProblem(answer(ALICE, runId, "ask-1", "{\"answer\":\"Paris\"}"), 409, "CONFLICT");
    }

    @Test
    void anApprovalAllowedWithEditedArgumentsRunsTheHandlerWithThemOnce() throws Exception {
        String session = http.newSession(ALICE);
        String runId = http.startRun(ALICE, session, "refund {\"order\":4200}").get("runId").asText();
        String inputId = waitingInput(runId).get("inputId").asText();
        assertThat(TestApplication.REFUNDS).as("nothing runs before the decision").noneMatch(a -> a.contains("4200"));

        Reply allowed = answer(ALICE, runId, inputId, "{\"decision\":\"allow_once\",\"editedArguments\":{\"order\":4201}}");
        assertThat(allowed.status()).as(allowed.body()).isEqualTo(200);
        assertThat(allowed.json().get("replayed").asBoolean()).isFalse();
        http.awaitState(ALICE, runId, "SUCCEEDED");
        assertThat(TestApplication.REFUNDS).contains("{\"order\":4201}").noneMatch(a -> a.contains("4200"));
        assertThat(assistantText(session, runId)).isEqualTo("The tool said: refunded {\"order\":4201}");
        JsonNode recorded = stepOf(session, runId, "approval");
        assertThat(recorded.get("decision").asText()).isEqualTo("allow_once");
        assertThat(recorded.get("outcome").asText()).isEqualTo("ANSWERED");
        assertThat(recorded.get("editedArguments").asText()).isEqualTo("{\"order\":4201}");

        Reply again = answer(ALICE, runId, inputId, "{\"decision\":\"allow_once\",\"editedArguments\":\"{\\\"order\\\":4201}\"}");
        assertThat(again.json().get("replayed").asBoolean()).as("the same answer, as JSON text").isTrue();
        assertProblem(answer(ALICE, runId, inputId, "{\"decision\":\"deny\"}"), 409, "CONFLICT");
        assertThat(TestApplication.REFUNDS.stream().filter(a -> a.contains("4201")).count()).isEqualTo(1);
    }

    @Test
    void aDeniedApprovalDoesNotRunAndTheModelIsTold() throws Exception {
        String session = http.newSession(ALICE);
        String runId = http.startRun(ALICE, session, "refund {\"order\":7007}").get("runId").asText();
        String inputId = waitingInput(runId).get("inputId").asText();
        assertThat(answer(ALICE, runId, inputId, "{\"kind\":\"approval\",\"decision\":\"deny\"}").status()).isEqualTo(200);
        http.awaitState(ALICE, runId, "SUCCEEDED");
        assertThat(assistantText(session, runId)).isEqualTo("The tool failed: the person denied this call of refund_order");
        assertThat(TestApplication.REFUNDS).noneMatch(a -> a.contains("7007"));
        assertThat(stepOf(session, runId, "approval").get("decision").asText()).isEqualTo("deny");
    }

    @Test
    void anExpiredOrWithdrawnInputIsAConflict() throws Exception {
        String session = http.newSession(ALICE);
        String expiring = http.startRun(ALICE, session, "quick refund {\"order\":3}").get("runId").asText();
        http.awaitState(ALICE, expiring, "SUCCEEDED");
        assertThat(stepOf(session, expiring, "approval").get("outcome").asText()).isEqualTo("EXPIRED");
        String expiredId = stepOf(session, expiring, "approval").get("inputId").asText();
        assertProblem(answer(ALICE, expiring, expiredId, "{\"decision\":\"allow_once\"}"), 409, "CONFLICT");

        String cancelled = http.startRun(ALICE, session, "refund {\"order\":5}").get("runId").asText();
        String inputId = waitingInput(cancelled).get("inputId").asText();
        http.post(ALICE, "/api/chat/runs/" + cancelled + "/cancel", null);
        http.awaitState(ALICE, cancelled, "CANCELLED");
        assertProblem(answer(ALICE, cancelled, inputId, "{\"decision\":\"allow_once\"}"), 409, "CONFLICT");
        assertThat(TestApplication.REFUNDS).noneMatch(a -> a.equals("{\"order\":3}") || a.equals("{\"order\":5}"));
    }

    @Test
    void aClientToolsResultGoesBackAsAJsonValueOrAnErrorAlsoOnRegenerate() throws Exception {
        String session = http.newSession(ALICE);
        Map<String, Object> body = Map.of("message", "client tool get_local_time", "clientTools", List.of(LOCAL_TIME));
        String first = http.startRun(ALICE, session, body).get("runId").asText();
        JsonNode call = waitingInput(first);
        Reply result = answer(ALICE, first, call.get("inputId").asText(), "{\"result\":{\"time\":\"12:00\"},\"error\":false}");
        assertThat(result.status()).as(result.body()).isEqualTo(200);
        http.awaitState(ALICE, first, "SUCCEEDED");
        assertThat(assistantText(session, first)).isEqualTo("The page said: {\"time\":\"12:00\"}");
        assertThat(stepOf(session, first, "result").get("result").asText()).isEqualTo("{\"time\":\"12:00\"}");

        String answerId = http.get(ALICE, "/api/chat/runs/" + first + "/state").json().get("run")
                .get("assistantMessageId").asText();
        Reply regenerated = http.post(ALICE, "/api/chat/messages/" + answerId + "/regenerate",
                ChatJson.shared().write(Map.of("clientTools", List.of(LOCAL_TIME))));
        assertThat(regenerated.status()).as(regenerated.body()).isEqualTo(202);
        String second = regenerated.json().get("runId").asText();
        JsonNode again = waitingInput(second);
        assertThat(again.get("request").get("toolName").asText()).isEqualTo("get_local_time");
        answer(ALICE, second, again.get("inputId").asText(), "{\"result\":\"no clock here\",\"error\":true}");
        http.awaitState(ALICE, second, "SUCCEEDED");
        assertThat(assistantText(session, second)).isEqualTo("The page failed: no clock here");
    }

    @Test
    void wrongShapesAreRefusedAndChangeNothing() throws Exception {
        String session = http.newSession(ALICE);
        String runId = http.startRun(ALICE, session, "refund {\"order\":9009}").get("runId").asText();
        String inputId = waitingInput(runId).get("inputId").asText();
        JsonNode before = http.get(ALICE, "/api/chat/runs/" + runId + "/state").json();

        List<String> wrong = List.of(
                "{}",
                "{\"decision\":\"maybe\"}",
                "{\"decision\":42}",
                "{\"decision\":\"always_allow\"}",
                "{\"decision\":\"allow_once\",\"answer\":\"yes\"}",
                "{\"kind\":\"approval\"}",
                "{\"kind\":\"poll\",\"decision\":\"allow_once\"}",
                "{\"decision\":\"allow_once\",\"editedArguments\":\"{not json\"}",
                "{\"decision\":\"deny\",\"editedArguments\":{\"order\":1}}",
                "{\"answer\":\"yes\"}",
                "{\"answer\":[\"yes\",7]}",
                "{\"result\":\"{}\"}",
                "{\"result\":\"{}\",\"error\":\"yes\"}",
                "[\"allow_once\"]",
                "{not json");
        for (String body : wrong) {
            Reply reply = answer(ALICE, runId, inputId, body);
            assertProblem(reply, 400, "INVALID_INPUT");
            assertThat(reply.json().get("detail").asText()).as(body).isNotBlank();
        }
        assertProblem(answer(ALICE, runId, "no-such-input", "{\"decision\":\"allow_once\"}"), 404, "NOT_FOUND");
        assertProblem(answer(MALLORY, runId, inputId, "{\"decision\":\"allow_once\"}"), 404, "NOT_FOUND");
        assertProblem(http.get(MALLORY, "/api/chat/runs/" + runId + "/state"), 404, "NOT_FOUND");
        assertProblem(http.send(ALICE, "POST", "/api/chat/runs/" + runId + "/inputs/" + inputId, "text/plain",
                "{\"decision\":\"allow_once\"}"), 415, "UNSUPPORTED_MEDIA_TYPE");

        JsonNode after = http.get(ALICE, "/api/chat/runs/" + runId + "/state").json();
        assertThat(after).as("nothing was logged, the input still waits").isEqualTo(before);
        assertThat(TestApplication.REFUNDS).noneMatch(a -> a.contains("9009"));
        assertThat(answer(ALICE, runId, inputId, "{\"decision\":\"allow_once\"}").status()).isEqualTo(200);
        http.awaitState(ALICE, runId, "SUCCEEDED");
        assertThat(TestApplication.REFUNDS).contains("{\"order\":9009}");
    }

    @Test
    void malformedClientToolsAreRefusedAndStartNothing() {
        String session = http.newSession(ALICE);
        List<Object> wrong = List.of(
                "get_local_time",
                List.of("get_local_time"),
                List.of(Map.of("description", "no name")),
                List.of(Map.of("name", "has space")),
                List.of(Map.of("name", "t", "parameters", "{\"type\":\"object\"}")),
                List.of(Map.of("name", "t", "parameters", List.of())),
                List.of(Map.of("name", "t", "description", 5)),
                List.of(LOCAL_TIME, LOCAL_TIME),
                List.of(Map.of("name", "refund_order")));
        for (Object tools : wrong) {
            Reply reply = http.post(ALICE, "/api/chat/sessions/" + session + "/runs",
                    ChatJson.shared().write(Map.of("message", "hi", "clientTools", tools)));
            assertProblem(reply, 400, "INVALID_INPUT");
        }
        assertThat(http.get(ALICE, "/api/chat/sessions/" + session).json().get("messages")).as("no run started").isEmpty();
        assertThat(http.post(ALICE, "/api/chat/sessions/" + session + "/runs",
                "{\"message\":\"hi\",\"clientTools\":[{\"name\":\"no_parameters\"}]}").status())
                .as("description and parameters may be left out").isEqualTo(202);
    }
}
