package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.jdbi.JdbiChatStore;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.InterceptedStore;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import javax.sql.DataSource;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Every read a request makes is bounded by the page sizes the host configured
 * ({@code parley.engine.default-page-size}, {@code parley.engine.max-page-size},
 * {@code parley.engine.max-steps-per-answer}), not by how long the thread or an answer is: the store (JDBI on a
 * real SQLite file) is wrapped to count every row it hands back on a request thread, and requests on a thread
 * of {@value #TURNS} turns, or on an answer of hundreds of steps, read about a page.
 */
@SpringBootTest(classes = {TestApplication.class, BoundedReadsHttpTest.CountingStore.class},
        webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT, properties = {
            "parley.owner.mode=HEADER",
            "parley.engine.default-page-size=4",
            "parley.engine.max-page-size=10",
            "parley.engine.max-steps-per-answer=5",
            "spring.datasource.url=jdbc:sqlite:target/bounded-reads-${random.uuid}.db"
        })
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BoundedReadsHttpTest {
    private static final String OWNER = "reader";
    private static final int TURNS = 60;

    /** The JDBI store, wrapped to count the rows it returns to Tomcat's request threads. */
    @Configuration(proxyBeanMethods = false)
    static class CountingStore {
        static final AtomicLong ROWS = new AtomicLong();

        @Bean(destroyMethod = "close")
        ChatStore countingChatStore(DataSource dataSource) {
            JdbiChatStore real = JdbiChatStore.builder(dataSource).migrate(true).build();
            return InterceptedStore.of(real, (method, args, proceed) -> {
                Object result = proceed.call();
                if (Thread.currentThread().getName().startsWith("http-")) {
                    ROWS.addAndGet(rows(result));
                }
                return result;
            });
        }

        private static long rows(Object result) {
            if (result instanceof Collection<?> list) {
                return list.size();
            }
            if (result instanceof Map<?, ?> map) {
                return map.values().stream().mapToLong(v -> v instanceof Collection<?> c ? c.size() : 1).sum();
            }
            return result instanceof Optional<?> value && value.isPresent() ? 1 : 0;
        }
    }

    @LocalServerPort
    int port;

    @Autowired
    ChatEngine engine;

    private HttpSupport http;
    private String threadId;
    private final List<String> topLevel = new ArrayList<>();

    @BeforeAll
    void aLongThread() {
        http = new HttpSupport(port);
        threadId = http.newSession(OWNER);
        for (int i = 0; i < TURNS; i++) {
            RunTicket ticket = engine.startRun(OWNER, threadId, StartRun.of("turn " + i));
            Await.until(() -> engine.state(OWNER, ticket.runId()).run().status(), s -> s == RunStatus.SUCCEEDED,
                    "turn " + i + " to end");
            topLevel.add(ticket.userMessageId());
            topLevel.add(ticket.assistantMessageId());
        }
    }

    private static <T> Read<T> reading(Supplier<T> request) {
        long before = CountingStore.ROWS.get();
        T result = request.get();
        return new Read<>(result, CountingStore.ROWS.get() - before);
    }

    private record Read<T>(T result, long rows) {
    }

    private static long topLevelCount(JsonNode view) {
        long count = 0;
        for (JsonNode message : view.get("messages")) {
            String type = message.get("type").asText();
            count += type.equals("user") || type.equals("assistant") ? 1 : 0;
        }
        return count;
    }

    @Test
    void pagesWithoutASizeAreTheConfiguredDefault() {
        HttpSupport.Reply view = http.get(OWNER, "/api/chat/sessions/" + threadId);
        assertThat(view.status()).as(view.body()).isEqualTo(200);
        assertThat(topLevelCount(view.json())).isEqualTo(4);
        HttpSupport.Reply sessions = http.get(OWNER, "/api/chat/sessions");
        assertThat(sessions.status()).as(sessions.body()).isEqualTo(200);
        assertThat(sessions.json().get("limit").asInt()).isEqualTo(4);
        assertThat(http.get(OWNER, "/api/chat/sessions/" + threadId + "?limit=11").status())
                .as("above the configured largest page").isEqualTo(400);
    }

    @Test
    void aCursorBeforeWhichNothingComesReadsAMessageNotTheBranch() {
        String base = "/api/chat/sessions/" + threadId + "/messages?limit=2&before=";
        Read<HttpSupport.Reply> bogus = reading(() -> http.get(OWNER, base + UUID.randomUUID()));
        assertThat(bogus.result().status()).isEqualTo(400);
        assertThat(bogus.result().json().get("code").asText()).isEqualTo("INVALID_INPUT");

        Read<HttpSupport.Reply> first = reading(() -> http.get(OWNER, base + topLevel.get(0)));
        assertThat(first.result().status()).as(first.result().body()).isEqualTo(200);
        assertThat(topLevelCount(first.result().json())).isZero();

        Read<HttpSupport.Reply> middle = reading(() -> http.get(OWNER, base + topLevel.get(TURNS)));
        assertThat(middle.result().status()).isEqualTo(200);
        assertThat(topLevelCount(middle.result().json())).isEqualTo(2);

        for (Read<HttpSupport.Reply> read : List.of(bogus, first, middle)) {
            assertThat(read.rows()).as("rows read for a page of 2 on a branch of %s messages", 2 * TURNS)
                    .isLessThanOrEqualTo(12);
        }
    }

    @Test
    void anAgUiMessageOnALongThreadReadsAPageOfIt() {
        String input = """
                {"threadId":"%s","runId":"r-bounded","state":{},"tools":[],"context":[],"forwardedProps":{},
                 "messages":[{"id":"%s","role":"user","content":"one more"}]}""".formatted(threadId, UUID.randomUUID());
        Read<HttpSupport.Reply> read = reading(() -> http.post(OWNER, "/api/chat/agui", input));
        assertThat(read.result().status()).as(read.result().body()).isEqualTo(200);
        List<JsonNode> events = Arrays.stream(read.result().body().split("\n\n")).filter(f -> f.startsWith("data: "))
                .map(f -> ChatJson.shared().readTree(f.substring("data: ".length()))).toList();
        assertThat(events.get(events.size() - 1).get("type").asText()).as(read.result().body()).isEqualTo("RUN_FINISHED");
        assertThat(read.rows()).as("rows read for an AG-UI turn on a branch of %s messages (max page 10)", 2 * TURNS)
                .isLessThanOrEqualTo(80);
    }

    @Test
    void anAnswerOfHundredsOfStepsIsShownByItsNewestAndExportedWhole() {
        String session = http.newSession(OWNER);
        RunTicket ticket = engine.startRun(OWNER, session, StartRun.of("many tools 300"));
        Await.until(() -> engine.state(OWNER, ticket.runId()).run().status(), s -> s == RunStatus.SUCCEEDED,
                "the run of 300 tool calls to end");

        Read<HttpSupport.Reply> read = reading(() -> http.get(OWNER, "/api/chat/sessions/" + session));

        JsonNode view = read.result().json();
        assertThat(read.result().status()).as(read.result().body()).isEqualTo(200);
        List<String> steps = new ArrayList<>();
        for (JsonNode message : view.get("messages")) {
            String type = message.get("type").asText();
            if (!type.equals("user") && !type.equals("assistant")) {
                steps.add(message.get("id").asText());
            }
        }
        assertThat(steps).containsExactly(ticket.runId() + ":result:297", ticket.runId() + ":tool:298",
                ticket.runId() + ":result:298", ticket.runId() + ":tool:299", ticket.runId() + ":result:299");
        assertThat(view.get("omittedSteps").get(ticket.assistantMessageId()).asInt()).isEqualTo(600 - 5);
        assertThat(view.get("omittedSteps").size()).isEqualTo(1);
        assertThat(read.rows()).as("rows read for a view of an answer of 600 steps (5 shown)").isLessThanOrEqualTo(20);

        HttpSupport.Reply export = http.get(OWNER, "/api/chat/sessions/" + session + "/export?format=json");
        assertThat(export.status()).isEqualTo(200);
        assertThat(export.json().get("messages").get(1).get("steps")).as("the export has every step").hasSize(600);
    }

    /**
     * An AG-UI client's snapshot of a thread shows an answer's newest steps as the view does, and leaves out a
     * tool result whose call is older than those (a tool message must answer a call of the snapshot).
     */
    @Test
    void anAgUiSnapshotOfAnAnswerOfHundredsOfStepsHasNoResultWithoutItsCall() {
        String session = http.newSession(OWNER);
        RunTicket ticket = engine.startRun(OWNER, session, StartRun.of("many tools 300"));
        Await.until(() -> engine.state(OWNER, ticket.runId()).run().status(), s -> s == RunStatus.SUCCEEDED,
                "the run of 300 tool calls to end");
        String input = """
                {"threadId":"%s","runId":"r-steps","state":{},"tools":[],"context":[],"forwardedProps":{},
                 "messages":[{"id":"%s","role":"user","content":"many tools 300"},
                             {"id":"%s","role":"assistant","content":"Looked it all up."},
                             {"id":"%s","role":"user","content":"thanks"}]}""".formatted(session,
                ticket.userMessageId(), ticket.assistantMessageId(), UUID.randomUUID());

        HttpSupport.Reply reply = http.post(OWNER, "/api/chat/agui", input);

        assertThat(reply.status()).as(reply.body()).isEqualTo(200);
        JsonNode snapshot = Arrays.stream(reply.body().split("\n\n")).filter(f -> f.startsWith("data: "))
                .map(f -> ChatJson.shared().readTree(f.substring("data: ".length())))
                .filter(e -> e.get("type").asText().equals("MESSAGES_SNAPSHOT")).findFirst().orElseThrow();
        List<String> calls = new ArrayList<>();
        List<String> answered = new ArrayList<>();
        for (JsonNode message : snapshot.get("messages")) {
            message.path("toolCalls").forEach(call -> calls.add(call.get("id").asText()));
            if (message.get("role").asText().equals("tool")) {
                answered.add(message.get("toolCallId").asText());
            }
        }
        assertThat(calls).hasSize(2);
        assertThat(answered).as("the tool results of the snapshot").containsExactlyElementsOf(calls);
    }
}
