package dev.parley.chat.spring;

import static dev.parley.chat.spring.CopilotKitSupport.input;
import static dev.parley.chat.spring.CopilotKitSupport.text;
import static dev.parley.chat.spring.CopilotKitSupport.types;
import static dev.parley.chat.spring.CopilotKitSupport.user;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * A CopilotKit page's thread after the host restarts: the host is stopped and started again on the same SQLite
 * file, and a page that connects to the new host gets the thread back under the same ids; its next turn, which
 * sends that history, continues the thread.
 */
class CopilotKitRestartHttpTest {
    private static final String OWNER = "copilotkit-restart";

    private static ConfigurableApplicationContext start(Path database) {
        // arguments, not default properties: the tests' application.properties names a fresh file per context
        return new SpringApplicationBuilder(TestApplication.class).run("--server.port=0",
                "--parley.owner.mode=HEADER", "--parley.web.copilotkit.trust-owner-header=true",
                "--spring.datasource.url=jdbc:sqlite:" + database);
    }

    private static int port(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    @Test
    void aThreadIsBackAfterARestartAndTheNextTurnContinuesIt() throws Exception {
        Files.createDirectories(Path.of("target"));
        Path database = Path.of("target", "copilotkit-restart-" + UUID.randomUUID() + ".db");
        String threadId = UUID.randomUUID().toString();
        String answerId;
        try (ConfigurableApplicationContext first = start(database)) {
            List<JsonNode> turn = new CopilotKitSupport(port(first)).run(OWNER,
                    input(threadId, List.of(user("u-1", "hello")), Map.of()));
            assertThat(types(turn)).endsWith("RUN_FINISHED");
            answerId = turn.stream().filter(e -> e.get("type").asText().equals("TEXT_MESSAGE_START")).findFirst()
                    .orElseThrow().get("messageId").asText();
        }
        try (ConfigurableApplicationContext second = start(database)) {
            CopilotKitSupport ck = new CopilotKitSupport(port(second));
            List<JsonNode> connected = ck.connect(OWNER, threadId);
            assertThat(types(connected)).containsExactly("RUN_STARTED", "MESSAGES_SNAPSHOT", "RUN_FINISHED");
            JsonNode messages = connected.get(1).get("messages");
            assertThat(messages).extracting(m -> m.get("id").asText()).containsExactly("u-1", answerId);

            List<JsonNode> next = ck.run(OWNER, input(threadId, List.of(user("u-1", "hello"),
                    Map.of("id", answerId, "role", "assistant", "content", messages.get(1).get("content").asText()),
                    user("u-2", "hello again")), Map.of()));
            assertThat(types(next)).endsWith("RUN_FINISHED").doesNotContain("RUN_ERROR");
            assertThat(text(next)).isEqualTo("Hello from the scripted runtime.");
            assertThat(ck.connect(OWNER, threadId).get(1).get("messages")).extracting(m -> m.get("id").asText())
                    .startsWith("u-1", answerId, "u-2").hasSize(4);
        }
    }
}
