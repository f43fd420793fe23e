package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.spring.HttpSupport.Reply;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/** {@code GET /sessions?q=} over loopback on the JDBI store's SQLite file (FTS5). */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
    "parley.owner.mode=HEADER",
    "spring.datasource.url=jdbc:sqlite:target/search-http-test.db"
})
class SearchOnSqliteHttpTest {
    /** Queries that a full-text engine could take for syntax: each is searched (200) or refused (400), never 500. */
    static final List<String> NASTY = List.of(
            "\"", "\"\"", "\"unbalanced", "un\"balanced", "a\"b\"c\"", "*", "**", "zebra*", "*zebra", "NEAR",
            "NEAR(a b)", "NEAR(a miss)", "a NEAR b", "NEAR/2", "a:b", "title:zebra", ":", "::", "-zebra", "zebra -giraffe", "NOT",
            "zebra NOT giraffe", "AND", "OR", "a OR b", "(", ")", "(zebra", "zebra)", "^zebra", "{zebra}", "[zebra]",
            "'", "''", "zebra'", "\\", "\\\"", "%", "_", "%_%", ";", "zebra; DROP TABLE messages; --", "--", "/*",
            "+", "+zebra", "@", "#", "$", "&", "|", "~", "!", "?", "<", ">", "=", "zebra=1", "\u0000", "\t", " ",
            "\n", "é", "日本語", "🦓", "\uD800", "zebra\u200Bstripes", "x".repeat(499), "x".repeat(501),
            "zebra ".repeat(15), "zebra ".repeat(17), "a b c d e f g h i j k l m n o p q", "\"zebra stripes\"",
            "\"zebra stripes", "zebra \"", "\"\" \"\" \"\"", "*\"*\"*", "NEAR(\"zebra\" \"stripes\", 3)",
            "{a b}:zebra", "- - -", "1e10", "0x7f", "null", "undefined", "%00", "%27", "&#39;", "<script>");

    @LocalServerPort
    int port;
    @Autowired
    ChatStore store;

    HttpSupport http;

    @BeforeEach
    void client() {
        http = new HttpSupport(port);
    }

    private Reply search(String owner, String query, String more) {
        return http.get(owner, "/api/chat/sessions?q=" + URLEncoder.encode(query, StandardCharsets.UTF_8) + more);
    }

    /** A session whose turns send these messages, one after the other, each answered. */
    private String sessionWith(String owner, String... messages) throws InterruptedException {
        String session = http.newSession(owner);
        for (String message : messages) {
            JsonNode ticket = http.startRun(owner, session, message);
            http.awaitState(owner, ticket.get("runId").asText(), "SUCCEEDED");
        }
        return session;
    }

    @Test
    void theStoreIsTheSqliteOne() {
        assertThat(store).isInstanceOf(JdbiChatStore.class);
    }

    @Test
    void everyNastyQueryIsSearchedOrRefusedNeverAServerError() throws Exception {
        String owner = "nasty-" + System.nanoTime();
        sessionWith(owner, "zebra stripes and a giraffe: a NEAR miss * \"quoted\"");
        List<String> answers = new ArrayList<>();
        for (String query : NASTY) {
            Reply reply = search(owner, query, "");
            answers.add(reply.status() + " " + query);
            assertThat(reply.status()).as("%s -> %s", query, reply.body()).isIn(200, 400);
            if (reply.status() == 200) {
                assertThat(reply.json().get("items").isArray()).isTrue();
            } else {
                assertThat(reply.contentType()).startsWith("application/problem+json");
                assertThat(reply.json().get("code").asText()).isEqualTo("INVALID_INPUT");
            }
        }
        assertThat(answers).as("some are searched, and the words in them are found")
                .contains("200 \"zebra stripes\"", "200 title:zebra", "200 NEAR(a miss)");
        assertThat(search(owner, "NEAR(a miss)", "").json().get("items")).as("operators are plain words").hasSize(1);
        assertThat(answers).contains("400 " + "x".repeat(501));
    }

    @Test
    void hitsAreTheCallersOnlyNewestMatchFirstWithSnippetsAndPaged() throws Exception {
        String owner = "finder-" + System.nanoTime();
        String other = "other-" + System.nanoTime();
        String both = sessionWith(owner, "okapi okapi okapi: the okapi is a forest giraffe", "more on the okapi");
        Set<String> once = new HashSet<>();
        for (int i = 0; i < 3; i++) {
            once.add(sessionWith(owner, "a story mentioning an okapi, number " + i));
        }
        sessionWith(owner, "nothing to see here");
        sessionWith(other, "my own okapi notes");

        JsonNode all = search(owner, "okapi", "&limit=10").json();
        List<String> ids = new ArrayList<>();
        all.get("items").forEach(hit -> ids.add(hit.get("thread").get("id").asText()));
        assertThat(ids).hasSize(4).last().as("the thread whose matching messages are oldest last, however many")
                .isEqualTo(both);
        assertThat(ids.subList(0, 3)).containsExactlyInAnyOrderElementsOf(once);
        assertThat(all.get("items").get(0).get("snippet").asText()).containsIgnoringCase("okapi");
        assertThat(all.get("items").get(0).get("messageId").asText()).isNotBlank();
        assertThat(all.has("nextCursor")).isFalse();

        JsonNode first = search(owner, "okapi", "&limit=3").json();
        assertThat(first.get("items")).hasSize(3);
        String cursor = first.get("nextCursor").asText();
        JsonNode second = search(owner, "okapi", "&limit=3&cursor=" + cursor).json();
        assertThat(second.get("items")).hasSize(1);
        assertThat(second.has("nextCursor")).isFalse();
        List<String> paged = new ArrayList<>();
        first.get("items").forEach(hit -> paged.add(hit.get("thread").get("id").asText()));
        second.get("items").forEach(hit -> paged.add(hit.get("thread").get("id").asText()));
        assertThat(paged).containsExactlyElementsOf(ids);

        assertThat(search(owner, "okapi", "&cursor=-1").status()).isEqualTo(400);
        assertThat(search(owner, "okapi", "&cursor=abc").status()).isEqualTo(400);
        assertThat(search(owner, "okapi", "&cursor=3").status()).as("a position is no cursor").isEqualTo(400);
        Reply otherQuery = search(owner, "giraffe", "&limit=3&cursor=" + cursor);
        assertThat(otherQuery.status()).as("a cursor is good for its own query").isEqualTo(400);
        assertThat(otherQuery.json().get("code").asText()).isEqualTo("INVALID_INPUT");
        assertThat(search(owner, "okapi", "&limit=100000").status()).isEqualTo(400);
        assertThat(http.get(owner, "/api/chat/sessions?q=").json().get("items").get(0).has("thread"))
                .as("a blank q lists the sessions").isFalse();
    }
}
