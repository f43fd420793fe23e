package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.reduce.RunReducer;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.spring.HttpSupport.Reply;
import dev.parley.chat.spring.HttpSupport.SseEvent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.codec.ServerSentEvent;

/** The REST + SSE endpoints on a real Tomcat over loopback. */
@LoopbackHttpTest
class ChatHttpTest {
    private static final String ALICE = "alice";
    private static final String MALLORY = "mallory";

    @LocalServerPort
    int port;
    @Autowired
    ChatStore store;
    @Autowired
    ParleyFlux flux;

    HttpSupport http;

    @BeforeEach
    void client() {
        http = new HttpSupport(port);
    }

    private String newSession(String owner) {
        return http.newSession(owner);
    }

    private JsonNode startRun(String owner, String sessionId, String message) {
        return http.startRun(owner, sessionId, message);
    }

    private JsonNode awaitState(String owner, String runId, String status) throws InterruptedException {
        return http.awaitState(owner, runId, status);
    }

    @Test
    void sessionsArePagedByCursorEachOnceAndTheLastPageSaysSo() {
        String owner = "pager-" + System.nanoTime();
        java.util.Set<String> created = new java.util.HashSet<>();
        for (int i = 0; i < 5; i++) {
            created.add(newSession(owner));
        }
        List<String> seen = new ArrayList<>();
        String cursor = null;
        int pages = 0;
        do {
            JsonNode page = http.get(owner, "/api/chat/sessions?limit=2" + (cursor == null ? "" : "&cursor=" + cursor))
                    .json();
            page.get("items").forEach(item -> seen.add(item.get("id").asText()));
            cursor = page.has("nextCursor") ? page.get("nextCursor").asText() : null;
            pages++;
        } while (cursor != null && pages < 10);
        assertThat(pages).isEqualTo(3);
        assertThat(seen).doesNotHaveDuplicates().containsExactlyInAnyOrderElementsOf(created);
    }

    @Test
    void aDroppedStreamResumesWithExactlyTheMissingEvents() throws Exception {
        String session = newSession(ALICE);
        String runId = startRun(ALICE, session, "slow please").get("runId").asText();

        List<SseEvent> first;
        try (HttpSupport.Stream stream = http.stream(ALICE, runId, null)) {
            assertThat(stream.response.headers().firstValue("Content-Type").orElse("")).startsWith("text/event-stream");
            first = stream.readUntil(event -> event.seq() == 10);
        }
        List<SseEvent> rest;
        try (HttpSupport.Stream stream = http.stream(ALICE, runId, "10")) {
            rest = stream.readUntil(SseEvent::terminal);
            assertThat(stream.next()).as("the stream closes after the terminal event").isNull();
        }
        List<SseEvent> whole;
        try (HttpSupport.Stream stream = http.stream(ALICE, runId, null)) {
            whole = stream.readUntil(SseEvent::terminal);
        }
        assertThat(first).hasSize(10);
        assertThat(whole.subList(0, 10)).isEqualTo(first);
        assertThat(rest).isEqualTo(whole.subList(10, whole.size()));
        for (int i = 0; i < whole.size(); i++) {
            assertThat(whole.get(i).seq()).isEqualTo(i + 1);
            RunEvent parsed = ChatJson.shared().readRunEvent(whole.get(i).data());
            assertThat(parsed.seq()).isEqualTo(i + 1);
            assertThat(parsed.type()).isEqualTo(whole.get(i).event());
        }
        assertThat(whole.get(whole.size() - 1).event()).isEqualTo("run_finished");

        Reply viaQuery = http.get(ALICE, "/api/chat/runs/" + runId + "/stream?lastEventId=" + (whole.size() - 1));
        assertThat(viaQuery.body()).contains("id:" + whole.size()).doesNotContain("id:" + (whole.size() - 1) + "\n");

        RunReducer reducer = new RunReducer();
        whole.forEach(e -> reducer.apply(ChatJson.shared().readRunEvent(e.data())));
        awaitState(ALICE, runId, "SUCCEEDED");
        JsonNode view = http.get(ALICE, "/api/chat/sessions/" + session).json();
        assertThat(ChatJson.shared().readTree(ChatJson.shared().write(reducer.messages())))
                .isEqualTo(view.get("messages"));
    }

    @Test
    void openStreamsHoldNoServletThread() throws Exception {
        List<String> runs = new ArrayList<>();
        List<HttpSupport.Stream> streams = new ArrayList<>();
        try {
            for (int i = 0; i < 12; i++) {
                String runId = startRun(ALICE, newSession(ALICE), "clarify " + i).get("runId").asText();
                runs.add(runId);
                HttpSupport.Stream stream = http.stream(ALICE, runId, null);
                stream.readUntil(event -> event.event().equals("input_requested"));
                streams.add(stream);
            }
            Reply listing = http.get(ALICE, "/api/chat/sessions?limit=100");
            assertThat(listing.status()).as("12 open streams, 4 servlet threads, and a request still gets through")
                    .isEqualTo(200);
            for (int i = 0; i < runs.size(); i++) {
                Reply answered = http.post(ALICE, "/api/chat/runs/" + runs.get(i) + "/resume",
                        "{\"clarifyId\":\"ask-1\",\"answer\":\"Rome\"}");
                assertThat(answered.json().get("replayed").asBoolean()).isFalse();
                List<SseEvent> tail = streams.get(i).readUntil(SseEvent::terminal);
                assertThat(tail.get(tail.size() - 1).event()).isEqualTo("run_finished");
            }
        } finally {
            for (HttpSupport.Stream stream : streams) {
                stream.close();
            }
        }
    }

    @Test
    void heartbeatsKeepAnIdleStreamAlive() throws Exception {
        String quiet = startRun(ALICE, newSession(ALICE), "clarify quietly").get("runId").asText();
        try (HttpSupport.Stream stream = http.stream(ALICE, quiet, null)) {
            stream.readUntil(event -> event.event().equals("input_requested"));
            Thread.sleep(700);
            http.post(ALICE, "/api/chat/runs/" + quiet + "/cancel", null);
            stream.readUntil(SseEvent::terminal);
            assertThat(stream.comments).as("heartbeat comments while the run waited").isNotEmpty()
                    .allMatch(comment -> comment.equals(":ping"));
        }
    }

    @Test
    void clarifyCancelRegenerateAndFeedbackOverHttp() throws Exception {
        String session = newSession(ALICE);
        String clarifyRun = startRun(ALICE, session, "clarify please").get("runId").asText();
        JsonNode waiting = awaitState(ALICE, clarifyRun, "WAITING_FOR_INPUT");
        assertThat(waiting.get("pendingInputs").get(0).get("request").get("question").asText()).isEqualTo("Which city?");
        Reply accepted = http.post(ALICE, "/api/chat/runs/" + clarifyRun + "/resume", "{\"clarifyId\":\"ask-1\",\"answer\":\"Rome\"}");
        assertThat(accepted.json().get("accepted").asBoolean()).isTrue();
        assertThat(accepted.json().get("replayed").asBoolean()).isFalse();
        awaitState(ALICE, clarifyRun, "SUCCEEDED");
        assertThat(http.post(ALICE, "/api/chat/runs/" + clarifyRun + "/resume", "{\"clarifyId\":\"ask-1\",\"answer\":\"Rome\"}")
                .json().get("replayed").asBoolean()).isTrue();
        Reply conflict = http.post(ALICE, "/api/chat/runs/" + clarifyRun + "/resume", "{\"clarifyId\":\"ask-1\",\"answer\":\"Paris\"}");
        assertThat(conflict.status()).isEqualTo(409);
        assertThat(conflict.json().get("code").asText()).isEqualTo("CONFLICT");

        JsonNode waitRun = startRun(ALICE, session, "wait for it");
        awaitState(ALICE, waitRun.get("runId").asText(), "RUNNING");
        assertThat(http.post(ALICE, "/api/chat/runs/" + waitRun.get("runId").asText() + "/cancel", null).status()).isEqualTo(202);
        awaitState(ALICE, waitRun.get("runId").asText(), "CANCELLED");

        String answerId = waitRun.get("assistantMessageId").asText();
        Reply regenerated = http.post(ALICE, "/api/chat/messages/" + answerId + "/regenerate", null);
        assertThat(regenerated.status()).isEqualTo(202);
        awaitState(ALICE, regenerated.json().get("runId").asText(), "RUNNING");
        http.post(ALICE, "/api/chat/runs/" + regenerated.json().get("runId").asText() + "/cancel", null);
        awaitState(ALICE, regenerated.json().get("runId").asText(), "CANCELLED");
        JsonNode view = http.get(ALICE, "/api/chat/sessions/" + session + "/messages?limit=10").json();
        assertThat(view.get("variants").get(answerId).get("count").asInt()).isEqualTo(2);

        Reply feedback = http.post(ALICE, "/api/chat/messages/" + answerId + "/feedback", "{\"rating\":\"down\",\"comment\":\"stopped\"}");
        assertThat(feedback.status()).isEqualTo(200);
        assertThat(store.findFeedback(answerId, ALICE).orElseThrow().comment()).isEqualTo("stopped");

        Reply patched = http.call(ALICE, "PATCH", "/api/chat/sessions/" + session, "{\"title\":\"Trip\",\"archived\":true}");
        assertThat(patched.json().get("title").asText()).isEqualTo("Trip");
        assertThat(patched.json().get("status").asText()).isEqualTo("ARCHIVED");
        assertThat(http.get(ALICE, "/api/chat/models").body()).isEqualTo("[]");
        assertThat(http.get(ALICE, "/api/chat/skills").body()).isEqualTo("[]");
    }

    @Test
    void anotherOwnerGetsNotFoundOnEveryEndpoint() throws Exception {
        String session = newSession(ALICE);
        JsonNode run = startRun(ALICE, session, "clarify it");
        String runId = run.get("runId").asText();
        String answerId = run.get("assistantMessageId").asText();
        awaitState(ALICE, runId, "WAITING_FOR_INPUT");

        List<Reply> replies = List.of(
                http.get(MALLORY, "/api/chat/sessions/" + session),
                http.call(MALLORY, "PATCH", "/api/chat/sessions/" + session, "{\"title\":\"mine\"}"),
                http.call(MALLORY, "DELETE", "/api/chat/sessions/" + session, null),
                http.get(MALLORY, "/api/chat/sessions/" + session + "/messages"),
                http.post(MALLORY, "/api/chat/sessions/" + session + "/runs", "{\"message\":\"hi\"}"),
                http.get(MALLORY, "/api/chat/runs/" + runId + "/stream"),
                http.get(MALLORY, "/api/chat/runs/" + runId + "/state"),
                http.post(MALLORY, "/api/chat/runs/" + runId + "/resume", "{\"clarifyId\":\"ask-1\",\"answer\":\"Rome\"}"),
                http.post(MALLORY, "/api/chat/runs/" + runId + "/cancel", null),
                http.post(MALLORY, "/api/chat/messages/" + answerId + "/regenerate", null),
                http.post(MALLORY, "/api/chat/messages/" + answerId + "/feedback", "{\"rating\":\"up\"}"));
        for (Reply reply : replies) {
            assertThat(reply.status()).as(reply.body()).isEqualTo(404);
            assertThat(reply.contentType()).startsWith("application/problem+json");
            assertThat(reply.json().get("code").asText()).isEqualTo("NOT_FOUND");
        }
        assertThat(http.get(MALLORY, "/api/chat/sessions").json().get("items")).isEmpty();
        Reply anonymous = http.get(null, "/api/chat/sessions");
        assertThat(anonymous.status()).isEqualTo(401);
        assertThat(anonymous.json().get("code").asText()).isEqualTo("UNAUTHENTICATED");

        JsonNode still = awaitState(ALICE, runId, "WAITING_FOR_INPUT");
        assertThat(still.get("pendingInputs")).hasSize(1);
        assertThat(http.get(ALICE, "/api/chat/sessions/" + session).json().get("thread").get("title").asText())
                .isEqualTo("clarify it");
        http.post(ALICE, "/api/chat/runs/" + runId + "/cancel", null);
        awaitState(ALICE, runId, "CANCELLED");
    }

    @Test
    void badInputIsAProblemAndWritesNothing() {
        String session = newSession(ALICE);
        List<Reply> replies = List.of(
                http.post(ALICE, "/api/chat/sessions/" + session + "/runs", "{not json"),
                http.post(ALICE, "/api/chat/sessions/" + session + "/runs", "[1,2]"),
                http.post(ALICE, "/api/chat/sessions/" + session + "/runs", "{\"message\":\"   \"}"),
                http.post(ALICE, "/api/chat/sessions/" + session + "/runs", "{\"message\":42}"),
                http.post(ALICE, "/api/chat/sessions/" + session + "/runs", "{}"),
                http.post(ALICE, "/api/chat/sessions/" + session + "/runs",
                        ChatJson.shared().write(Map.of("message", "x".repeat(100_001)))),
                http.post(ALICE, "/api/chat/sessions/" + session + "/runs", "{\"message\":\"hi\",\"maxIterations\":0}"),
                http.post(ALICE, "/api/chat/sessions/" + session + "/runs", "{\"message\":\"hi\",\"context\":\"nope\"}"),
                http.get(ALICE, "/api/chat/sessions?limit=-1"),
                http.get(ALICE, "/api/chat/sessions?cursor=not-a-cursor"),
                http.get(ALICE, "/api/chat/sessions/" + session + "/messages?before=no-such-message"),
                http.call(ALICE, "PATCH", "/api/chat/sessions/" + session, "{\"title\":\"\"}"),
                http.post(ALICE, "/api/chat/sessions", "{\"title\":7}"));
        for (Reply reply : replies) {
            assertThat(reply.status()).as(reply.body()).isEqualTo(400);
            assertThat(reply.contentType()).startsWith("application/problem+json");
            assertThat(reply.json().get("code").asText()).isEqualTo("INVALID_INPUT");
            assertThat(reply.json().get("status").asInt()).isEqualTo(400);
            assertThat(reply.json().get("type").asText()).isEqualTo("urn:parley:error:invalid-input");
        }
        List<Reply> unknown = List.of(
                http.post(ALICE, "/api/chat/sessions/no-such-session/runs", "{\"message\":\"hi\"}"),
                http.get(ALICE, "/api/chat/runs/no-such-run/state"),
                http.get(ALICE, "/api/chat/runs/no-such-run/stream"),
                http.post(ALICE, "/api/chat/messages/no-such-message/feedback", "{\"rating\":\"up\"}"));
        for (Reply reply : unknown) {
            assertThat(reply.status()).as(reply.body()).isEqualTo(404);
            assertThat(reply.json().get("code").asText()).isEqualTo("NOT_FOUND");
        }
        String runId = startRun(ALICE, session, "hello").get("runId").asText();
        Reply badCursor = http.get(ALICE, "/api/chat/runs/" + runId + "/stream?lastEventId=abc");
        assertThat(badCursor.status()).isEqualTo(400);
        assertThat(badCursor.contentType()).startsWith("application/problem+json");
        Reply badRating = http.post(ALICE, "/api/chat/messages/" + startRunAnswer(session) + "/feedback", "{\"rating\":\"meh\"}");
        assertThat(badRating.status()).isEqualTo(400);

        JsonNode view = http.get(ALICE, "/api/chat/sessions/" + session).json();
        List<String> userTexts = new ArrayList<>();
        view.get("messages").forEach(m -> {
            if (m.get("type").asText().equals("user")) {
                userTexts.add(m.get("text").asText());
            }
        });
        assertThat(userTexts).as("only the valid messages were stored").containsExactly("hello");
        assertThat(view.get("thread").get("title").asText()).isEqualTo("hello");
    }

    @Test
    void bodiesThatAreNotJsonAreRefusedWith415AndChangeNothing() throws Exception {
        String carol = "carol-" + System.nanoTime();
        List<Reply> refused = new ArrayList<>(List.of(
                http.send(carol, "POST", "/api/chat/sessions", "text/plain", "{\"title\":\"from a form\"}"),
                http.send(carol, "POST", "/api/chat/sessions", "text/plain;charset=UTF-8", "{}"),
                http.send(carol, "POST", "/api/chat/sessions", "application/x-www-form-urlencoded", "title=from+a+form"),
                http.send(carol, "POST", "/api/chat/sessions", "multipart/form-data; boundary=x", "--x--"),
                http.send(carol, "POST", "/api/chat/sessions", null, "{\"title\":\"no type\"}"),
                http.send(carol, "POST", "/api/chat/sessions", null, null),
                http.send(carol, "POST", "/api/chat/sessions", "application/jsonp", "{}"),
                http.send(carol, "POST", "/api/chat/sessions", "not a media type", "{}")));
        assertThat(http.get(carol, "/api/chat/sessions").json().get("items")).as("no session was created").isEmpty();

        String session = newSession(carol);
        JsonNode run = startRun(carol, session, "clarify me");
        String runId = run.get("runId").asText();
        String answerId = run.get("assistantMessageId").asText();
        awaitState(carol, runId, "WAITING_FOR_INPUT");
        refused.addAll(List.of(
                http.send(carol, "POST", "/api/chat/sessions/" + session + "/runs", "text/plain", "{\"message\":\"forged\"}"),
                http.send(carol, "POST", "/api/chat/sessions/" + session + "/runs", null, "{\"message\":\"forged\"}"),
                http.send(carol, "PATCH", "/api/chat/sessions/" + session, "text/plain", "{\"title\":\"forged\"}"),
                http.send(carol, "POST", "/api/chat/runs/" + runId + "/resume", "application/x-www-form-urlencoded",
                        "clarifyId=ask-1&answer=Paris"),
                http.send(carol, "POST", "/api/chat/messages/" + answerId + "/feedback", "text/plain", "{\"rating\":\"down\"}"),
                http.send(carol, "POST", "/api/chat/runs/" + runId + "/cancel", "text/plain", ""),
                http.send(carol, "POST", "/api/chat/runs/" + runId + "/cancel", "text/plain", "x"),
                http.send(carol, "POST", "/api/chat/runs/" + runId + "/cancel", null, "x"),
                http.send(carol, "DELETE", "/api/chat/sessions/" + session, "application/x-www-form-urlencoded", "a=b")));
        for (Reply reply : refused) {
            assertThat(reply.status()).as(reply.body()).isEqualTo(415);
            assertThat(reply.contentType()).startsWith("application/problem+json");
            assertThat(reply.json().get("code").asText()).isEqualTo("UNSUPPORTED_MEDIA_TYPE");
            assertThat(reply.json().get("type").asText()).isEqualTo("urn:parley:error:unsupported-media-type");
            assertThat(reply.json().get("detail").asText()).contains("application/json");
            assertThat(reply.headers().firstValue("Accept")).contains("application/json");
        }
        JsonNode state = awaitState(carol, runId, "WAITING_FOR_INPUT");
        assertThat(state.get("pendingInputs")).as("the clarify is still open").hasSize(1);
        JsonNode view = http.get(carol, "/api/chat/sessions/" + session).json();
        assertThat(view.get("thread").get("title").asText()).isEqualTo("clarify me");
        assertThat(view.get("messages").findValuesAsText("text")).doesNotContain("forged");
        assertThat(store.findFeedback(answerId, carol)).isEmpty();
        assertThat(http.get(carol, "/api/chat/sessions").json().get("items")).hasSize(1);

        assertThat(http.send(carol, "POST", "/api/chat/sessions", "application/json; charset=utf-8", "{}").status())
                .isEqualTo(201);
        assertThat(http.send(carol, "PATCH", "/api/chat/sessions/" + session, "application/merge-patch+json",
                "{\"title\":\"Renamed\"}").status()).isEqualTo(200);
        assertThat(http.send(carol, "POST", "/api/chat/runs/" + runId + "/cancel", null, null).status())
                .as("an endpoint without a body needs no content type").isEqualTo(202);
        awaitState(carol, runId, "CANCELLED");
        assertThat(http.send(carol, "GET", "/api/chat/sessions", "text/plain", null).status())
                .as("a GET without a body changes nothing: its content type does not matter").isEqualTo(200);
        assertThat(http.send(carol, "GET", "/api/chat/sessions", "text/plain", "x").status())
                .as("but a body must be JSON on every endpoint").isEqualTo(415);
    }

    private String startRunAnswer(String session) {
        JsonNode view = http.get(ALICE, "/api/chat/sessions/" + session).json();
        List<String> answers = new ArrayList<>();
        view.get("messages").forEach(m -> {
            if (m.get("type").asText().equals("assistant")) {
                answers.add(m.get("id").asText());
            }
        });
        return answers.get(0);
    }

    @Test
    void theFluxHelperStreamsARunForWebFluxControllers() throws Exception {
        String runId = startRun(ALICE, newSession(ALICE), "tools please").get("runId").asText();
        var events = flux.stream(ALICE, runId, "0").collectList().block(java.time.Duration.ofSeconds(20));
        List<String> types = events.stream().filter(e -> e.event() != null).map(e -> e.event()).collect(Collectors.toList());
        assertThat(types).startsWith("run_started", "messages").contains("tool_call_start", "todos").endsWith("run_finished");
        assertThat(events.stream().filter(e -> e.id() != null).map(e -> Long.parseLong(e.id())).collect(Collectors.toList()))
                .isSorted().doesNotHaveDuplicates();
        assertThat(flux.stream(ALICE, runId, "3").filter(e -> e.id() != null).blockFirst().id()).isEqualTo("4");
    }

    @Test
    void theFluxHelperSendsHeartbeatsAndAClientLeavingDoesNotStopTheRun() throws Exception {
        String runId = startRun(ALICE, newSession(ALICE), "clarify please").get("runId").asText();
        List<ServerSentEvent<String>> quiet = flux.stream(ALICE, runId, null)
                .skipUntil(e -> "input_requested".equals(e.event()))
                .filter(e -> e.comment() != null)
                .take(2)
                .collectList()
                .block(Duration.ofSeconds(20));
        assertThat(quiet).extracting(ServerSentEvent::comment).containsExactly("ping", "ping");
        Thread.sleep(300);
        awaitState(ALICE, runId, "WAITING_FOR_INPUT");
        assertThat(http.post(ALICE, "/api/chat/runs/" + runId + "/resume", "{\"clarifyId\":\"ask-1\",\"answer\":\"Rome\"}")
                .json().get("accepted").asBoolean()).isTrue();
        awaitState(ALICE, runId, "SUCCEEDED");
    }
}

