package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.spring.internal.agui.AgUiController;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The AG-UI endpoint's wire format and its refusals, over loopback, with its path moved by
 * {@code parley.web.agui.path}. What the official clients make of it is {@link AgUiClientsNodeTest}.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"parley.owner.mode=HEADER", "parley.web.agui.path=/ag-ui"})
class AgUiHttpTest {
    private static final String OWNER = "agui-http";

    @LocalServerPort
    int port;

    private static String input(String threadId, String text) {
        return """
                {"threadId":"%s","runId":"r-1","state":{},"tools":[],"context":[],"forwardedProps":{},
                 "messages":[{"id":"m-1","role":"user","content":"%s"}]}""".formatted(threadId, text);
    }

    @Test
    void anAnswerIsAStreamOfDataFramesWithLfLineEndsClosedAfterRunFinished() {
        HttpSupport http = new HttpSupport(port);
        String threadId = UUID.randomUUID().toString();
        HttpSupport.Reply reply = http.post(OWNER, "/api/chat/ag-ui", input(threadId, "hello"));
        assertThat(reply.status()).isEqualTo(200);
        assertThat(reply.contentType()).startsWith("text/event-stream");
        assertThat(reply.body()).doesNotContain("\r").doesNotContain("event:").endsWith("\n\n");
        List<JsonNode> events = Arrays.stream(reply.body().split("\n\n")).filter(f -> f.startsWith("data: "))
                .map(f -> ChatJson.shared().readTree(f.substring("data: ".length()))).toList();
        assertThat(events.get(0).get("type").asText()).isEqualTo("RUN_STARTED");
        assertThat(events.get(0).get("threadId").asText()).isEqualTo(threadId);
        assertThat(events.get(0).get("runId").asText()).isEqualTo("r-1");
        JsonNode last = events.get(events.size() - 1);
        assertThat(last.get("type").asText()).isEqualTo("RUN_FINISHED");
        assertThat(last.has("outcome")).as("0.0.59 takes no outcome but success or interrupt").isFalse();
        assertThat(events).noneMatch(e -> e.toString().contains(":null"));
        assertThat(events).extracting(e -> e.get("type").asText()).doesNotContain("THINKING_START",
                "THINKING_TEXT_MESSAGE_START", "ACTIVITY_SNAPSHOT");
    }

    @Test
    void aMalformedInputIsAProblemAndCreatesNoThread() {
        HttpSupport http = new HttpSupport(port);
        String threadId = UUID.randomUUID().toString();
        HttpSupport.Reply noRunId = http.post(OWNER, "/api/chat/ag-ui",
                "{\"threadId\":\"" + threadId + "\",\"messages\":[]}");
        assertThat(noRunId.status()).isEqualTo(400);
        assertThat(noRunId.contentType()).startsWith("application/problem+json");
        assertThat(noRunId.json().get("code").asText()).isEqualTo("INVALID_INPUT");
        assertThat(noRunId.json().get("detail").asText()).contains("runId");

        HttpSupport.Reply image = http.post(OWNER, "/api/chat/ag-ui", input(threadId, "x").replace("\"content\":\"x\"",
                "\"content\":[{\"type\":\"image\",\"source\":{\"type\":\"url\",\"value\":\"https://example.org/a.png\"}}]"));
        assertThat(image.status()).isEqualTo(400);
        assertThat(image.json().get("detail").asText()).contains("has no text");

        assertThat(http.get(OWNER, "/api/chat/sessions/" + threadId).status()).as("nothing was created").isEqualTo(404);
    }

    /**
     * An input refused for what it holds does not create the thread it names on first use: refused with a
     * problem (a message too long, a tool the host already offers) or with a lone RUN_ERROR (nothing to run,
     * answers on a thread with no run, a history the new thread does not have).
     */
    @Test
    void anInputRefusedForItsContentCreatesNoThread() {
        HttpSupport http = new HttpSupport(port);
        String threadId = UUID.randomUUID().toString();
        HttpSupport.Reply tooLong = http.post(OWNER, "/api/chat/ag-ui", input(threadId, "x".repeat(100_001)));
        assertThat(tooLong.status()).isEqualTo(400);
        HttpSupport.Reply clashingTool = http.post(OWNER, "/api/chat/ag-ui", input(threadId, "hi").replace("\"tools\":[]",
                "\"tools\":[{\"name\":\"refund_order\",\"description\":\"mine\",\"parameters\":{}}]"));
        assertThat(clashingTool.status()).as(clashingTool.body()).isEqualTo(400);
        List<String> runErrors = List.of(
                input(threadId, "hi").replace("\"role\":\"user\"", "\"role\":\"assistant\""),
                input(threadId, "hi").replace("\"messages\"", "\"resume\":[{\"interruptId\":\"i-1\",\"status\":"
                        + "\"resolved\",\"payload\":\"yes\"}],\"messages\""),
                input(threadId, "hi").replace("[{\"id\":\"m-1\"", "[{\"id\":\"m-0\",\"role\":\"user\",\"content\":"
                        + "\"earlier\"},{\"id\":\"m-1\""));
        for (String refused : runErrors) {
            HttpSupport.Reply reply = http.post(OWNER, "/api/chat/ag-ui", refused);
            assertThat(reply.status()).isEqualTo(200);
            assertThat(reply.body()).as(refused).contains("\"type\":\"RUN_ERROR\"").doesNotContain("RUN_STARTED");
        }
        assertThat(http.get(OWNER, "/api/chat/sessions/" + threadId).status()).as("nothing was created").isEqualTo(404);

        assertThat(http.post(OWNER, "/api/chat/ag-ui", input(threadId, "hello")).body())
                .as("a good input creates it").contains("RUN_FINISHED");
        assertThat(http.get(OWNER, "/api/chat/sessions/" + threadId).status()).isEqualTo(200);
    }

    @Test
    void aRequestNamingNoCallerIsRefusedAndThePathMoved() {
        HttpSupport http = new HttpSupport(port);
        String threadId = UUID.randomUUID().toString();
        assertThat(http.post(null, "/api/chat/ag-ui", input(threadId, "hello")).status()).isEqualTo(401);
        assertThat(http.post(OWNER, "/api/chat/agui", input(threadId, "hello")).status())
                .as("parley.web.agui.path moved it").isEqualTo(404);
    }

    @Test
    void theEndpointIsOnWithTheOthersAndSwitchesOffAlone() {
        WebApplicationContextRunner web = new WebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ParleyAutoConfiguration.class, ParleyWebAutoConfiguration.class,
                        ParleyAgUiAutoConfiguration.class))
                .withPropertyValues("parley.owner.mode=HEADER")
                .withBean(dev.parley.chat.runtime.RuntimeAdapter.class,
                        () -> dev.parley.chat.testing.ScriptedRuntime.playing(dev.parley.chat.testing.Scripts.instant("hi")));
        web.run(context -> assertThat(context).hasSingleBean(AgUiController.class));
        web.withPropertyValues("parley.web.agui.enabled=false").run(context -> {
            assertThat(context).doesNotHaveBean(AgUiController.class);
            assertThat(context).hasBean("parleyChatController");
        });
        web.withPropertyValues("parley.web.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(AgUiController.class));
    }
}
