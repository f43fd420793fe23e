package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.spring.HttpSupport.Reply;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;

/** Follow-up suggestions over HTTP: read after a run (waiting for them), in the session view, owner-isolated. */
@LoopbackHttpTest
class SuggestionsHttpTest {
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

    private static List<String> texts(JsonNode array) {
        List<String> out = new ArrayList<>();
        array.forEach(n -> out.add(n.asText()));
        return out;
    }

    private JsonNode answerInView(String owner, String session, String answerId) {
        for (JsonNode m : http.get(owner, "/api/chat/sessions/" + session).json().get("messages")) {
            if (m.get("id").asText().equals(answerId)) {
                return m;
            }
        }
        throw new AssertionError("no answer " + answerId + " in the view");
    }

    @Test
    void afterARunTheSuggestionsAreWaitedForAndTheSessionViewCarriesThem() throws Exception {
        String alice = owner("alice");
        String session = http.newSession(alice);
        JsonNode ticket = http.startRun(alice, session, "suggest slow trip");
        http.awaitState(alice, ticket.get("runId").asText(), "SUCCEEDED");
        String answerId = ticket.get("assistantMessageId").asText();

        Reply now = http.get(alice, "/api/chat/messages/" + answerId + "/suggestions");
        assertThat(now.status()).isEqualTo(200);
        assertThat(now.json().get("pending").asBoolean()).as("still being made, not waited for").isTrue();
        assertThat(now.json().get("prompts")).isEmpty();

        Reply waited = http.get(alice, "/api/chat/messages/" + answerId + "/suggestions?wait=10");
        assertThat(waited.status()).isEqualTo(200);
        assertThat(waited.json().get("messageId").asText()).isEqualTo(answerId);
        assertThat(texts(waited.json().get("prompts"))).containsExactly("Tell me more", "What next after suggest slow trip?");
        assertThat(waited.json().get("pending").asBoolean()).isFalse();

        JsonNode answer = answerInView(alice, session, answerId);
        assertThat(texts(answer.get("suggestions").get("prompts")))
                .as("a reload reads them from the session view").containsExactly("Tell me more",
                        "What next after suggest slow trip?");

        Reply foreign = http.get("mallory", "/api/chat/messages/" + answerId + "/suggestions?wait=1");
        assertThat(foreign.status()).isEqualTo(404);
        assertThat(foreign.json().get("code").asText()).isEqualTo("NOT_FOUND");
    }

    @Test
    void aFailingProviderLeavesTheRunSucceededAndNothingPending() throws Exception {
        String alice = owner("alice");
        String session = http.newSession(alice);
        JsonNode ticket = http.startRun(alice, session, "suggest broken");
        JsonNode state = http.awaitState(alice, ticket.get("runId").asText(), "SUCCEEDED");
        assertThat(state).isNotNull();
        String answerId = ticket.get("assistantMessageId").asText();
        Reply waited = http.get(alice, "/api/chat/messages/" + answerId + "/suggestions?wait=10");
        assertThat(waited.status()).isEqualTo(200);
        assertThat(waited.json().get("prompts")).isEmpty();
        assertThat(waited.json().get("pending").asBoolean()).isFalse();
        assertThat(answerInView(alice, session, answerId).has("suggestions")).isFalse();
    }

    @Test
    void badRequestsAreProblems() throws Exception {
        String alice = owner("alice");
        String session = http.newSession(alice);
        JsonNode ticket = http.startRun(alice, session, "hello");
        http.awaitState(alice, ticket.get("runId").asText(), "SUCCEEDED");
        String answerId = ticket.get("assistantMessageId").asText();
        for (String wait : List.of("-1", "31", "soon", "1.5")) {
            Reply bad = http.get(alice, "/api/chat/messages/" + answerId + "/suggestions?wait=" + wait);
            assertThat(bad.status()).as("wait=" + wait).isEqualTo(400);
            assertThat(bad.json().get("code").asText()).isEqualTo("INVALID_INPUT");
        }
        Reply userMessage = http.get(alice, "/api/chat/messages/" + ticket.get("userMessageId").asText() + "/suggestions");
        assertThat(userMessage.status()).isEqualTo(400);
        assertThat(http.get(alice, "/api/chat/messages/nope/suggestions").status()).isEqualTo(404);
        Reply none = http.get(alice, "/api/chat/messages/" + answerId + "/suggestions?wait=5");
        assertThat(none.status()).as("no suggestions for this answer, none coming").isEqualTo(200);
        assertThat(none.json().get("pending").asBoolean()).isFalse();
    }
}
