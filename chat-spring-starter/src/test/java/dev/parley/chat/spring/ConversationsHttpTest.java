package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.spring.HttpSupport.Reply;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;

/** Edits and branches, idempotent sends and exports over loopback HTTP. */
@LoopbackHttpTest
class ConversationsHttpTest {
    @LocalServerPort
    int port;

    HttpSupport http;

    @BeforeEach
    void client() {
        http = new HttpSupport(port);
    }

    private String owner(String name) {
        return name + "-" + System.nanoTime();
    }

    private JsonNode sendAndFinish(String owner, String session, String message) throws InterruptedException {
        JsonNode ticket = http.startRun(owner, session, message);
        http.awaitState(owner, ticket.get("runId").asText(), "SUCCEEDED");
        return ticket;
    }

    private static List<String> topLevelIds(JsonNode view) {
        List<String> ids = new ArrayList<>();
        view.get("messages").forEach(m -> {
            String type = m.get("type").asText();
            if (type.equals("user") || type.equals("assistant")) {
                ids.add(m.get("id").asText());
            }
        });
        return ids;
    }

    private Reply edit(String owner, String messageId, String body) {
        return http.post(owner, "/api/chat/messages/" + messageId + "/edit", body);
    }

    @Test
    void anEditBranchesTheThreadAndTheActiveBranchCanBeSwitchedBackAndForth() throws Exception {
        String alice = owner("alice");
        String session = http.newSession(alice);
        JsonNode first = sendAndFinish(alice, session, "plan a trip");
        JsonNode second = sendAndFinish(alice, session, "to Lisbon");
        String secondId = second.get("userMessageId").asText();

        Reply edited = edit(alice, secondId, "{\"text\":\"to Porto\"}");
        assertThat(edited.status()).as(edited.body()).isEqualTo(202);
        String editId = edited.json().get("userMessageId").asText();
        http.awaitState(alice, edited.json().get("runId").asText(), "SUCCEEDED");

        JsonNode view = http.get(alice, "/api/chat/sessions/" + session).json();
        assertThat(topLevelIds(view)).containsExactly(first.get("userMessageId").asText(),
                first.get("assistantMessageId").asText(), editId, edited.json().get("assistantMessageId").asText());
        JsonNode fork = view.get("branches").get(editId);
        assertThat(fork.get("index").asInt()).isEqualTo(1);
        assertThat(fork.get("count").asInt()).isEqualTo(2);
        assertThat(fork.get("siblingIds")).extracting(JsonNode::asText).containsExactly(secondId, editId);
        assertThat(view.get("branches").get(first.get("userMessageId").asText()).get("count").asInt()).isEqualTo(1);
        assertThat(view.get("messages").findValuesAsText("text")).contains("to Porto").doesNotContain("to Lisbon");

        Reply back = http.post(alice, "/api/chat/messages/" + secondId + "/activate", null);
        assertThat(back.status()).as(back.body()).isEqualTo(200);
        assertThat(topLevelIds(back.json())).endsWith(secondId, second.get("assistantMessageId").asText());
        assertThat(back.json().get("branches").get(secondId).get("index").asInt()).isZero();
        assertThat(topLevelIds(http.get(alice, "/api/chat/sessions/" + session).json()))
                .as("the switch is kept").endsWith(secondId, second.get("assistantMessageId").asText());

        Reply forward = http.post(alice, "/api/chat/messages/" + editId + "/activate", null);
        assertThat(topLevelIds(forward.json())).endsWith(editId, edited.json().get("assistantMessageId").asText());
    }

    @Test
    void anotherOwnersMessageCannotBeEditedOrActivatedAndBadEditsChangeNothing() throws Exception {
        String alice = owner("alice");
        String session = http.newSession(alice);
        JsonNode ticket = sendAndFinish(alice, session, "hello");
        String userId = ticket.get("userMessageId").asText();
        String before = http.get(alice, "/api/chat/sessions/" + session).body();

        Reply foreignEdit = edit("mallory", userId, "{\"text\":\"mine now\"}");
        assertThat(foreignEdit.status()).isEqualTo(404);
        assertThat(foreignEdit.contentType()).startsWith("application/problem+json");
        assertThat(foreignEdit.json().get("code").asText()).isEqualTo("NOT_FOUND");
        assertThat(http.post("mallory", "/api/chat/messages/" + userId + "/activate", null).status()).isEqualTo(404);

        assertThat(edit(alice, userId, "{}").status()).as("no text").isEqualTo(400);
        assertThat(edit(alice, userId, "{\"text\":\"   \"}").status()).as("blank text").isEqualTo(400);
        assertThat(edit(alice, userId, "{\"text\":7}").status()).isEqualTo(400);
        Reply answerEdit = edit(alice, ticket.get("assistantMessageId").asText(), "{\"text\":\"x\"}");
        assertThat(answerEdit.status()).as("only the person's messages are edited").isEqualTo(400);
        assertThat(http.send(alice, "POST", "/api/chat/messages/" + userId + "/edit", "text/plain", "{\"text\":\"x\"}")
                .status()).isEqualTo(415);
        assertThat(http.get(alice, "/api/chat/sessions/" + session).body()).as("nothing changed").isEqualTo(before);
    }

    @Test
    void editingWhileARunIsActiveFollowsTheDoubleTextingRule() throws Exception {
        String alice = owner("alice");
        String session = http.newSession(alice);
        JsonNode first = sendAndFinish(alice, session, "hello");
        JsonNode busy = http.startRun(alice, session, "wait for it");
        Reply edit = edit(alice, first.get("userMessageId").asText(), "{\"text\":\"hello again\"}");
        assertThat(edit.status()).as("REJECT: one active run per thread").isEqualTo(409);
        assertThat(edit.json().get("code").asText()).isEqualTo("CONFLICT");
        Reply activate = http.post(alice, "/api/chat/messages/" + first.get("userMessageId").asText() + "/activate", null);
        assertThat(activate.status()).isEqualTo(409);
        http.post(alice, "/api/chat/runs/" + busy.get("runId").asText() + "/cancel", null);
        http.awaitState(alice, busy.get("runId").asText(), "CANCELLED");
    }

    @Test
    void aRetriedSendWithTheSameClientMessageIdStartsNothingAndGetsTheFirstTicket() throws Exception {
        String alice = owner("alice");
        String session = http.newSession(alice);
        String body = "{\"message\":\"hello\",\"clientMessageId\":\"c-1\"}";
        Reply first = http.post(alice, "/api/chat/sessions/" + session + "/runs", body);
        assertThat(first.status()).as(first.body()).isEqualTo(202);
        assertThat(first.json().get("replayed").asBoolean()).isFalse();
        Reply again = http.post(alice, "/api/chat/sessions/" + session + "/runs", body);
        assertThat(again.status()).as(again.body()).isEqualTo(200);
        assertThat(again.json().get("runId").asText()).isEqualTo(first.json().get("runId").asText());
        assertThat(again.json().get("userMessageId").asText()).isEqualTo(first.json().get("userMessageId").asText());
        assertThat(again.json().get("replayed").asBoolean()).isTrue();

        Reply other = http.post(alice, "/api/chat/sessions/" + session + "/runs",
                "{\"message\":\"something else\",\"clientMessageId\":\"c-1\"}");
        assertThat(other.status()).isEqualTo(409);
        assertThat(other.contentType()).startsWith("application/problem+json");
        assertThat(other.json().get("code").asText()).isEqualTo("CONFLICT");

        http.awaitState(alice, first.json().get("runId").asText(), "SUCCEEDED");
        JsonNode view = http.get(alice, "/api/chat/sessions/" + session).json();
        List<JsonNode> users = new ArrayList<>();
        view.get("messages").forEach(m -> {
            if (m.get("type").asText().equals("user")) {
                users.add(m);
            }
        });
        assertThat(users).as("one message, however often it was sent").hasSize(1);
        assertThat(users.get(0).get("clientMessageId").asText()).isEqualTo("c-1");
    }

    @Test
    void theIdempotencyKeyHeaderIsTheClientMessageIdAndMayNotContradictTheBody() throws Exception {
        String alice = owner("alice");
        String session = http.newSession(alice);
        Reply first = withKey(alice, session, "k-1", "{\"message\":\"hi\"}");
        assertThat(first.status()).as(first.body()).isEqualTo(202);
        Reply again = withKey(alice, session, "k-1", "{\"message\":\"hi\"}");
        assertThat(again.status()).isEqualTo(200);
        assertThat(again.json().get("runId").asText()).isEqualTo(first.json().get("runId").asText());
        Reply sameInBody = http.post(alice, "/api/chat/sessions/" + session + "/runs",
                "{\"message\":\"hi\",\"clientMessageId\":\"k-1\"}");
        assertThat(sameInBody.status()).as("the header and the body name one id").isEqualTo(200);

        Reply both = withKey(alice, session, "k-2", "{\"message\":\"hi\",\"clientMessageId\":\"k-3\"}");
        assertThat(both.status()).isEqualTo(400);
        assertThat(both.json().get("code").asText()).isEqualTo("INVALID_INPUT");
        assertThat(withKey(alice, session, "k".repeat(201), "{\"message\":\"hi\"}").status()).isEqualTo(400);
        http.awaitState(alice, first.json().get("runId").asText(), "SUCCEEDED");
        JsonNode user = http.get(alice, "/api/chat/sessions/" + session).json().get("messages").get(0);
        assertThat(user.get("clientMessageId").asText()).isEqualTo("k-1");
        assertThat(http.get(alice, "/api/chat/sessions/" + session).json().get("messages").findValues("clientMessageId"))
                .as("neither refused request stored a message").hasSize(1);
    }

    private Reply withKey(String owner, String session, String key, String body) {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/api/chat/sessions/"
                + session + "/runs")).timeout(Duration.ofSeconds(20)).header("Content-Type", "application/json")
                .header("X-Parley-Owner", owner).header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build();
        try {
            HttpResponse<String> response = HttpSupport.HTTP.send(request, HttpResponse.BodyHandlers.ofString());
            return new Reply(response.statusCode(), response.headers().firstValue("Content-Type").orElse(""),
                    response.body(), response.headers());
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    void aSessionIsExportedAsMarkdownOrJsonAsADownload() throws Exception {
        String alice = owner("alice");
        String session = http.newSession(alice);
        sendAndFinish(alice, session, "tools please");

        Reply markdown = http.get(alice, "/api/chat/sessions/" + session + "/export?format=markdown");
        assertThat(markdown.status()).as(markdown.body()).isEqualTo(200);
        assertThat(markdown.contentType()).startsWith("text/markdown").containsIgnoringCase("charset=utf-8");
        assertThat(markdown.headers().firstValue("Content-Disposition").orElse(""))
                .startsWith("attachment").contains("parley-" + session + ".md");
        assertThat(markdown.body()).contains("tools please");

        Reply json = http.get(alice, "/api/chat/sessions/" + session + "/export?format=json");
        assertThat(json.status()).isEqualTo(200);
        assertThat(json.contentType()).startsWith("application/json");
        assertThat(json.headers().firstValue("Content-Disposition").orElse("")).contains("parley-" + session + ".json");
        JsonNode export = json.json();
        assertThat(export.get("format").asText()).isEqualTo("parley-thread");
        assertThat(export.get("version").asInt()).isEqualTo(1);
        assertThat(export.get("thread").get("id").asText()).isEqualTo(session);
        assertThat(ChatJson.shared().write(export.get("messages"))).contains("tools please", "web_search");
        assertThat(http.get(alice, "/api/chat/sessions/" + session + "/export").json().get("format").asText())
                .as("JSON by default").isEqualTo("parley-thread");
    }

    @Test
    void anUnknownFormatOrAnotherOwnersSessionIsRefusedWithAProblem() {
        String alice = owner("alice");
        String session = http.newSession(alice);
        Reply unknown = http.get(alice, "/api/chat/sessions/" + session + "/export?format=pdf");
        assertThat(unknown.status()).isEqualTo(400);
        assertThat(unknown.contentType()).startsWith("application/problem+json");
        assertThat(unknown.headers().firstValue("Content-Disposition")).isEmpty();
        Reply foreign = http.get("mallory", "/api/chat/sessions/" + session + "/export?format=markdown");
        assertThat(foreign.status()).isEqualTo(404);
        assertThat(foreign.json().get("code").asText()).isEqualTo("NOT_FOUND");
        assertThat(foreign.headers().firstValue("Content-Disposition")).isEmpty();
        assertThat(http.get(alice, "/api/chat/sessions/no-such-session/export").status()).isEqualTo(404);
    }

    @Test
    void searchOnTheInMemoryStoreFindsOnlyTheCallersSessions() throws Exception {
        String alice = owner("alice");
        String mallory = owner("mallory");
        String mine = http.newSession(alice);
        sendAndFinish(alice, mine, "the zanzibar itinerary");
        sendAndFinish(mallory, http.newSession(mallory), "my zanzibar secrets");
        JsonNode page = http.get(alice, "/api/chat/sessions?q=zanzibar").json();
        assertThat(page.get("items")).hasSize(1);
        assertThat(page.get("items").get(0).get("thread").get("id").asText()).isEqualTo(mine);
        JsonNode hit = page.get("items").get(0);
        String snippet = hit.get("snippet").asText();
        assertThat(snippet).containsIgnoringCase("zanzibar");
        assertThat(hit.get("highlights")).as("where the query matches in the snippet").isNotEmpty();
        for (JsonNode range : hit.get("highlights")) {
            assertThat(snippet.substring(range.get("start").asInt(), range.get("end").asInt()))
                    .isEqualToIgnoringCase("zanzibar");
        }
        JsonNode prefix = http.get(alice, "/api/chat/sessions?q=zanz").json().get("items").get(0);
        assertThat(prefix.get("highlights")).extracting(r -> prefix.get("snippet").asText()
                .substring(r.get("start").asInt(), r.get("end").asInt()).toLowerCase(java.util.Locale.ROOT))
                .as("a prefix marks the whole word it begins").containsOnly("zanzibar");
        assertThat(http.get(alice, "/api/chat/sessions?q=" + "x".repeat(600)).status()).isEqualTo(400);
    }
}
