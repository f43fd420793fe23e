package dev.parley.chat.spring;

import static dev.parley.chat.spring.CopilotKitSupport.events;
import static dev.parley.chat.spring.CopilotKitSupport.input;
import static dev.parley.chat.spring.CopilotKitSupport.text;
import static dev.parley.chat.spring.CopilotKitSupport.types;
import static dev.parley.chat.spring.CopilotKitSupport.user;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * CopilotKit's runtime protocol over loopback, as its front end speaks it with no Node runtime in between:
 * the runtime's description, turns, a page that reloads (connect) on a thread at rest, with a live run and
 * with a pending question, stop, the thread list, and the single-route envelope. The owner header is trusted
 * here, as behind a proxy that sets it; {@link CopilotKitOwnerHttpTest} shows it refused otherwise.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"parley.owner.mode=HEADER", "parley.web.copilotkit.trust-owner-header=true",
            "parley.web.heartbeat=100ms"})
class CopilotKitHttpTest {
    private static final String OWNER = "copilotkit-http";

    @LocalServerPort
    int port;

    /** How many user and assistant messages the thread holds. */
    private static long turns(CopilotKitSupport ck, String owner, String threadId) {
        JsonNode messages = ck.http.get(owner, "/api/chat/sessions/" + threadId).json().get("messages");
        long count = 0;
        for (JsonNode m : messages) {
            String type = m.get("type").asText();
            count += type.equals("user") || type.equals("assistant") ? 1 : 0;
        }
        return count;
    }

    @Test
    void infoListsTheOneDefaultAgentInSseMode() {
        HttpSupport.Reply info = new CopilotKitSupport(port).http.get(null, CopilotKitSupport.BASE + "/info");
        assertThat(info.status()).isEqualTo(200);
        assertThat(info.contentType()).startsWith("application/json");
        JsonNode json = info.json();
        assertThat(json.get("mode").asText()).isEqualTo("sse");
        assertThat(json.get("version").isTextual()).isTrue();
        assertThat(json.get("audioFileTranscriptionEnabled").asBoolean()).isFalse();
        assertThat(json.get("agents").size()).isEqualTo(1);
        JsonNode agent = json.get("agents").get("default");
        assertThat(agent.get("name").asText()).isEqualTo("default");
        assertThat(agent.get("description").asText()).isNotBlank();
        assertThat(json.get("threadEndpoints").get("list").asBoolean()).isTrue();
    }

    @Test
    void twoTurnsThenAConnectRebuildsTheThreadUnderTheSameIds() {
        CopilotKitSupport ck = new CopilotKitSupport(port);
        String threadId = UUID.randomUUID().toString();
        List<JsonNode> first = ck.run(OWNER, input(threadId, List.of(user("u-1", "hello")), Map.of()));
        assertThat(types(first)).startsWith("RUN_STARTED", "MESSAGES_SNAPSHOT").endsWith("RUN_FINISHED");
        assertThat(text(first)).isEqualTo("Hello from the scripted runtime.");
        String answerId = first.stream().filter(e -> e.get("type").asText().equals("TEXT_MESSAGE_START")).findFirst()
                .orElseThrow().get("messageId").asText();

        List<Object> history = new ArrayList<>(List.of(user("u-1", "hello"),
                Map.of("id", answerId, "role", "assistant", "content", "Hello from the scripted runtime."),
                user("u-2", "hello again")));
        List<JsonNode> second = ck.run(OWNER, input(threadId, history, Map.of()));
        assertThat(types(second)).endsWith("RUN_FINISHED").doesNotContain("RUN_ERROR");

        List<JsonNode> connected = ck.connect(OWNER, threadId);
        assertThat(types(connected)).containsExactly("RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED");
        JsonNode messages = connected.get(1).get("messages");
        assertThat(messages).extracting(m -> m.get("role").asText())
                .containsExactly("user", "assistant", "user", "assistant");
        assertThat(messages.get(0).get("id").asText()).isEqualTo("u-1");
        assertThat(messages.get(1).get("id").asText()).isEqualTo(answerId);
        assertThat(messages.get(2).get("id").asText()).isEqualTo("u-2");
        assertThat(connected.get(2).has("outcome")).isFalse();
        assertThat(turns(ck, OWNER, threadId)).isEqualTo(4);
    }

    @Test
    void aConnectNeverCreatesAThreadAndAnotherOwnersThreadConnectsEmpty() {
        CopilotKitSupport ck = new CopilotKitSupport(port);
        String unknown = UUID.randomUUID().toString();
        HttpSupport.Reply empty = ck.post(OWNER, "/agent/default/connect", input(unknown, List.of(), Map.of()));
        assertThat(empty.status()).isEqualTo(200);
        assertThat(empty.contentType()).startsWith("text/event-stream");
        assertThat(empty.body()).isEmpty();
        assertThat(ck.http.get(OWNER, "/api/chat/sessions/" + unknown).status()).as("nothing created").isEqualTo(404);

        String mine = UUID.randomUUID().toString();
        ck.run(OWNER, input(mine, List.of(user("u-1", "hello")), Map.of()));
        HttpSupport.Reply theirs = ck.post("someone-else", "/agent/default/connect", input(mine, List.of(), Map.of()));
        assertThat(theirs.status()).isEqualTo(200);
        assertThat(theirs.body()).as("another owner's thread answers as an unknown one").isEmpty();
        assertThat(ck.post("someone-else", "/agent/default/stop/" + mine, "").json().get("stopped").asBoolean())
                .isFalse();
    }

    /**
     * A page reloaded mid-answer: the run's stream is dropped (which does not stop the run), and the connect
     * answers the snapshot without the answer, then the answer from its first delta, live to its end: the
     * answer once, whole.
     */
    @Test
    void aReloadMidAnswerShowsTheAnswerOnceToItsEnd() throws Exception {
        CopilotKitSupport ck = new CopilotKitSupport(port);
        String threadId = UUID.randomUUID().toString();
        try (CopilotKitSupport.Open run = ck.open(OWNER, "/agent/default/run",
                input(threadId, List.of(user("u-1", "slow please")), Map.of()))) {
            run.until("TEXT_MESSAGE_CONTENT");
        }
        try (CopilotKitSupport.Open connect = ck.open(OWNER, "/agent/default/connect",
                input(threadId, List.of(), Map.of()))) {
            List<JsonNode> events = connect.toEnd();
            assertThat(types(events)).startsWith("RUN_STARTED", "MESSAGES_SNAPSHOT").endsWith("RUN_FINISHED")
                    .containsOnlyOnce("TEXT_MESSAGE_START");
            assertThat(events.get(1).get("messages")).extracting(m -> m.get("role").asText()).containsExactly("user");
            String expected = new StringBuilder().append(String.join("", java.util.stream.IntStream.range(0, 40)
                    .mapToObj(i -> "s" + i + " ").toList())).toString();
            assertThat(text(events)).isEqualTo(expected);
        }
        JsonNode view = ck.http.get(OWNER, "/api/chat/sessions/" + threadId).json();
        assertThat(view.get("messages").get(1).get("status").asText()).as("leaving did not stop the run")
                .isEqualTo("COMPLETED");
    }

    /**
     * Stop: the page keeps its run's stream open and asks the server to stop; the stream ends with the run,
     * closed by the server with {@code RUN_FINISHED}, and the partial answer is kept.
     */
    @Test
    void stopKeepsThePartialAnswerAndEndsTheOpenRunStream() throws Exception {
        CopilotKitSupport ck = new CopilotKitSupport(port);
        String threadId = UUID.randomUUID().toString();
        try (CopilotKitSupport.Open run = ck.open(OWNER, "/agent/default/run",
                input(threadId, List.of(user("u-1", "wait for me")), Map.of()))) {
            run.until("TEXT_MESSAGE_CONTENT");
            HttpSupport.Reply stopped = ck.post(OWNER, "/agent/default/stop/" + threadId, "{\"runId\":\"r-1\"}");
            assertThat(stopped.status()).isEqualTo(200);
            assertThat(stopped.json().get("stopped").asBoolean()).isTrue();
            assertThat(stopped.json().get("interrupt").get("code").asText()).isEqualTo("STOPPED");
            List<JsonNode> events = run.toEnd();
            assertThat(types(events)).endsWith("TEXT_MESSAGE_END", "RUN_FINISHED").doesNotContain("RUN_ERROR");
        }
        List<JsonNode> connected = ck.connect(OWNER, threadId);
        assertThat(types(connected)).containsExactly("RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED");
        assertThat(connected.get(1).get("messages").get(1).get("content").asText()).isEqualTo("Partial answer");
        HttpSupport.Reply again = ck.post(OWNER, "/agent/default/stop/" + threadId, "");
        assertThat(again.json().get("stopped").asBoolean()).as("nothing left to stop").isFalse();
        assertThat(again.json().get("message").asText()).isNotBlank();
    }

    /**
     * Stop while the agent's own tool runs: the open stream closes the call with a {@code stopped} result
     * before {@code RUN_FINISHED}, as CopilotKit's runtime does, and a reloaded page finds the same result, so
     * neither shows the call running for good.
     */
    @Test
    void stopClosesAToolCallWithoutResultWithAStoppedResultLiveAndAfterReload() throws Exception {
        CopilotKitSupport ck = new CopilotKitSupport(port);
        String threadId = UUID.randomUUID().toString();
        List<JsonNode> events;
        try (CopilotKitSupport.Open run = ck.open(OWNER, "/agent/default/run",
                input(threadId, List.of(user("u-1", "long tool search")), Map.of()))) {
            run.until("TOOL_CALL_END");
            assertThat(ck.post(OWNER, "/agent/default/stop/" + threadId, "").json().get("stopped").asBoolean())
                    .isTrue();
            events = run.toEnd();
        }
        assertThat(types(events)).endsWith("TOOL_CALL_END", "TOOL_CALL_RESULT", "RUN_FINISHED")
                .doesNotContain("RUN_ERROR");
        JsonNode start = events.stream().filter(e -> e.get("type").asText().equals("TOOL_CALL_START")).findFirst()
                .orElseThrow();
        JsonNode result = events.get(events.size() - 2);
        String toolCallId = start.get("toolCallId").asText();
        assertThat(result.get("toolCallId").asText()).isEqualTo(toolCallId);
        assertThat(result.get("role").asText()).isEqualTo("tool");
        assertThat(result.get("messageId").asText()).isEqualTo(toolCallId + "-result");
        JsonNode content = dev.parley.chat.json.ChatJson.shared().readTree(result.get("content").asText());
        assertThat(content.get("status").asText()).isEqualTo("stopped");
        assertThat(content.get("reason").asText()).isEqualTo("stop_requested");

        JsonNode messages = ck.connect(OWNER, threadId).get(1).get("messages");
        assertThat(messages).extracting(m -> m.get("role").asText()).containsExactly("user", "assistant", "tool");
        assertThat(messages.get(1).get("toolCalls").get(0).get("id").asText()).isEqualTo(toolCallId);
        assertThat(messages.get(2).get("toolCallId").asText()).isEqualTo(toolCallId);
        assertThat(messages.get(2).get("id").asText()).isEqualTo(toolCallId + "-result");
        assertThat(dev.parley.chat.json.ChatJson.shared().readTree(messages.get(2).get("content").asText()).get("status").asText())
                .isEqualTo("stopped");
    }

    /** A question pending when the page reloads comes back as an interrupt, and {@code resume[]} answers it. */
    @Test
    void aPendingQuestionComesBackOnConnectAndResumeAnswersIt() throws Exception {
        CopilotKitSupport ck = new CopilotKitSupport(port);
        String threadId = UUID.randomUUID().toString();
        List<JsonNode> asked = ck.run(OWNER, input(threadId, List.of(user("u-1", "clarify the city")), Map.of()));
        JsonNode interrupt = asked.get(asked.size() - 1).get("outcome").get("interrupts").get(0);

        List<JsonNode> reloaded = ck.connect(OWNER, threadId);
        JsonNode finished = reloaded.get(reloaded.size() - 1);
        assertThat(finished.get("type").asText()).isEqualTo("RUN_FINISHED");
        assertThat(finished.get("outcome").get("type").asText()).isEqualTo("interrupt");
        JsonNode again = finished.get("outcome").get("interrupts").get(0);
        assertThat(again.get("id").asText()).isEqualTo(interrupt.get("id").asText());
        assertThat(again.get("message").asText()).isEqualTo("Which city?");

        List<JsonNode> resumed = ck.run(OWNER, input(threadId, List.of(user("u-1", "clarify the city")), Map.of(
                "resume", List.of(Map.of("interruptId", again.get("id").asText(), "status", "resolved",
                        "payload", "Rome")))));
        assertThat(types(resumed)).endsWith("RUN_FINISHED").doesNotContain("RUN_ERROR");
        assertThat(resumed.get(resumed.size() - 1).has("outcome")).isFalse();
        assertThat(text(resumed)).isEqualTo("You chose Rome.");
        assertThat(types(ck.connect(OWNER, threadId))).containsExactly("RUN_STARTED", "MESSAGES_SNAPSHOT",
                "RUN_FINISHED");
    }

    @Test
    void theThreadListPagesTheCallersThreadsOnly() {
        CopilotKitSupport ck = new CopilotKitSupport(port);
        String owner = "lister-" + UUID.randomUUID();
        List<String> ids = List.of(UUID.randomUUID().toString(), UUID.randomUUID().toString());
        for (String id : ids) {
            ck.run(owner, input(id, List.of(user("u-" + id, "hello")), Map.of()));
        }
        JsonNode first = ck.http.get(owner, CopilotKitSupport.BASE + "/threads?agentId=default&limit=1").json();
        assertThat(first.get("threads").size()).isEqualTo(1);
        JsonNode thread = first.get("threads").get(0);
        assertThat(thread.get("id").asText()).isEqualTo(ids.get(1));
        assertThat(thread.get("agentId").asText()).isEqualTo("default");
        assertThat(thread.get("createdById").asText()).isEqualTo(owner);
        assertThat(thread.get("archived").asBoolean()).isFalse();
        assertThat(thread.get("createdAt").asText()).isNotBlank();
        assertThat(thread.has("name")).isTrue();
        String cursor = first.get("nextCursor").asText();
        JsonNode second = ck.http.get(owner, CopilotKitSupport.BASE + "/threads?limit=1&cursor="
                + java.net.URLEncoder.encode(cursor, java.nio.charset.StandardCharsets.UTF_8)).json();
        assertThat(second.get("threads").get(0).get("id").asText()).isEqualTo(ids.get(0));
        assertThat(second.get("nextCursor").isNull()).isTrue();
        assertThat(ck.http.get("nobody-" + UUID.randomUUID(), CopilotKitSupport.BASE + "/threads").json()
                .get("threads").size()).isZero();
    }

    /** Malformed bodies are 400 in CopilotKit's shape, an unknown agent 404, and none of them changes anything. */
    @Test
    void badRequestsAreRefusedAndChangeNothing() {
        CopilotKitSupport ck = new CopilotKitSupport(port);
        String threadId = UUID.randomUUID().toString();
        HttpSupport.Reply noRunId = ck.post(OWNER, "/agent/default/run",
                "{\"threadId\":\"" + threadId + "\",\"messages\":[{\"id\":\"u\",\"role\":\"user\",\"content\":\"hi\"}]}");
        assertThat(noRunId.status()).isEqualTo(400);
        assertThat(noRunId.json().get("error").asText()).isEqualTo("Invalid request body");
        assertThat(noRunId.json().get("details").asText()).contains("runId");
        assertThat(ck.post(OWNER, "/agent/default/run", "[1,2]").status()).isEqualTo(400);
        assertThat(ck.post(OWNER, "/agent/default/connect", "{\"threadId\":\"" + threadId + "\"}").status())
                .isEqualTo(400);
        HttpSupport.Reply unknownAgent = ck.post(OWNER, "/agent/other/run",
                input(threadId, List.of(user("u", "hi")), Map.of()));
        assertThat(unknownAgent.status()).isEqualTo(404);
        assertThat(unknownAgent.json().get("error").asText()).isEqualTo("Agent not found");
        assertThat(unknownAgent.json().get("message").asText()).isEqualTo("Agent 'other' does not exist");
        HttpSupport.Reply form = ck.http.send(OWNER, "POST", CopilotKitSupport.BASE + "/agent/default/run",
                "text/plain", input(threadId, List.of(user("u", "hi")), Map.of()));
        assertThat(form.status()).isEqualTo(415);
        assertThat(ck.http.get(OWNER, "/api/chat/sessions/" + threadId).status()).as("nothing created").isEqualTo(404);

        ck.run(OWNER, input(threadId, List.of(user("u-1", "hello")), Map.of()));
        HttpSupport.Reply otherKey = ck.post(OWNER, "/agent/default/stop/" + threadId, "{\"force\":true}");
        assertThat(otherKey.status()).isEqualTo(400);
        assertThat(otherKey.json().get("error").asText()).isEqualTo("Invalid stop request");
        HttpSupport.Reply badRunId = ck.post(OWNER, "/agent/default/stop/" + threadId, "{\"runId\":5}");
        assertThat(badRunId.status()).isEqualTo(400);
        assertThat(badRunId.json().get("error").asText()).isEqualTo("Invalid runId");
        assertThat(ck.http.get(OWNER, CopilotKitSupport.BASE + "/threads?limit=zero").status()).isEqualTo(400);
        assertThat(turns(ck, OWNER, threadId)).as("one turn only").isEqualTo(2);
    }

    /** A route asked with a method it does not take answers 405 in the runtime's shape, with Allow. */
    @Test
    void aWrongMethodIsRefusedInTheRuntimesShapeWithAllow() {
        CopilotKitSupport ck = new CopilotKitSupport(port);
        String threadId = UUID.randomUUID().toString();
        for (String[] wrong : new String[][] {{"GET", "/agent/default/run", "POST"}, {"DELETE", "/agent/default/connect",
                "POST"}, {"GET", "/agent/default/stop/" + threadId, "POST"}, {"PUT", "", "POST"},
                {"POST", "/info", "GET"}, {"DELETE", "/threads", "GET"}}) {
            HttpSupport.Reply reply = ck.http.send(OWNER, wrong[0], CopilotKitSupport.BASE + wrong[1],
                    "application/json", wrong[0].equals("GET") ? null : "{}");
            assertThat(reply.status()).as(wrong[0] + " " + wrong[1]).isEqualTo(405);
            assertThat(reply.json().get("error").asText()).isEqualTo("Method not allowed");
            assertThat(reply.headers().firstValue("Allow")).as(wrong[0] + " " + wrong[1]).hasValue(wrong[2]);
        }
        assertThat(ck.http.get(OWNER, "/api/chat/sessions/" + threadId).status()).as("nothing created").isEqualTo(404);
    }

    /** The single route carries the same calls: info, run, connect, stop and the thread list. */
    @Test
    void theSingleRouteEnvelopeCarriesEveryCall() {
        CopilotKitSupport ck = new CopilotKitSupport(port);
        String owner = "envelope-" + UUID.randomUUID();
        String threadId = UUID.randomUUID().toString();
        HttpSupport.Reply info = ck.post(owner, "", "{\"method\":\"info\"}");
        assertThat(info.status()).isEqualTo(200);
        assertThat(info.json().get("agents").has("default")).isTrue();

        String run = "{\"method\":\"agent/run\",\"params\":{\"agentId\":\"default\"},\"body\":"
                + input(threadId, List.of(user("u-1", "hello")), Map.of()) + "}";
        HttpSupport.Reply ran = ck.post(owner, "", run);
        assertThat(ran.contentType()).startsWith("text/event-stream");
        assertThat(types(events(ran.body()))).endsWith("RUN_FINISHED");

        String connect = "{\"method\":\"agent/connect\",\"params\":{\"agentId\":\"default\"},\"body\":"
                + input(threadId, List.of(), Map.of()) + "}";
        assertThat(types(events(ck.post(owner, "", connect).body())))
                .containsExactly("RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED");

        HttpSupport.Reply stop = ck.post(owner, "", "{\"method\":\"agent/stop\",\"params\":{\"agentId\":\"default\","
                + "\"threadId\":\"" + threadId + "\"}}");
        assertThat(stop.json().get("stopped").asBoolean()).isFalse();

        HttpSupport.Reply threads = ck.post(owner, "", "{\"method\":\"resource/request\",\"params\":{\"path\":"
                + "\"/threads?agentId=default&limit=5\",\"httpMethod\":\"GET\"}}");
        assertThat(threads.json().get("threads")).extracting(t -> t.get("id").asText()).containsExactly(threadId);

        HttpSupport.Reply noMethod = ck.post(owner, "", "{\"params\":{}}");
        assertThat(noMethod.status()).isEqualTo(400);
        assertThat(noMethod.json().get("error").asText()).isEqualTo("invalid_request");
        assertThat(ck.post(owner, "", "{\"method\":\"transcribe\"}").status()).isEqualTo(400);
        assertThat(ck.post(owner, "", run.replace("\"agentId\":\"default\"", "\"agentId\":\"nope\"")).status())
                .isEqualTo(404);
        assertThat(ck.http.send(owner, "POST", CopilotKitSupport.BASE, "text/plain", "{\"method\":\"info\"}")
                .status()).isEqualTo(415);
        assertThat(turns(ck, owner, threadId)).as("one turn only").isEqualTo(2);
    }
}
