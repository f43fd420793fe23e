package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.json.ChatJson;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/** With {@code parley.web.accept-client-context=false} nothing a client sends as context reaches the runtime. */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"parley.owner.mode=HEADER", "parley.web.accept-client-context=false"})
class ClientContextOffHttpTest {
    @LocalServerPort
    int port;

    @Test
    void restAndAgUiContextIsDropped() throws Exception {
        HttpSupport http = new HttpSupport(port);
        String session = http.newSession(ClientContextHttpTest.OWNER);
        http.startRun(ClientContextHttpTest.OWNER, session, Map.of("message", "show context",
                "context", Map.of("page", "/orders/7")));
        assertThat(ClientContextHttpTest.contextSeen(http, session)).isEqualTo(ChatJson.shared().objectNode());

        String threadId = UUID.randomUUID().toString();
        HttpSupport.Reply reply = http.post(ClientContextHttpTest.OWNER, "/api/chat/agui",
                ClientContextHttpTest.aguiInput(threadId));
        assertThat(reply.status()).as(reply.body()).isEqualTo(200);
        assertThat(ClientContextHttpTest.contextSeen(http, threadId)).isEqualTo(ChatJson.shared().objectNode());
    }
}
