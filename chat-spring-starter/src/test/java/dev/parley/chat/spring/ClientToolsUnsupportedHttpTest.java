package dev.parley.chat.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.spring.HttpSupport.Reply;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/** A runtime that cannot call tools refuses a run with client tools: {@code 501 UNSUPPORTED}, nothing stored. */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"parley.owner.mode=HEADER", "test.runtime.tools=false"})
class ClientToolsUnsupportedHttpTest {
    @LocalServerPort
    int port;

    @Test
    void aRunWithClientToolsIsUnsupportedAndStartsNothing() {
        HttpSupport http = new HttpSupport(port);
        String session = http.newSession("no-tools");
        Reply refused = http.post("no-tools", "/api/chat/sessions/" + session + "/runs",
                "{\"message\":\"hi\",\"clientTools\":[{\"name\":\"get_local_time\",\"parameters\":{\"type\":\"object\"}}]}");
        assertThat(refused.status()).as(refused.body()).isEqualTo(501);
        assertThat(refused.contentType()).startsWith("application/problem+json");
        assertThat(refused.json().get("code").asText()).isEqualTo("UNSUPPORTED");
        assertThat(http.get("no-tools", "/api/chat/sessions/" + session).json().get("messages")).isEmpty();
        assertThat(http.post("no-tools", "/api/chat/sessions/" + session + "/runs", "{\"message\":\"hi\"}").status())
                .as("without client tools the run starts").isEqualTo(202);
    }
}
