package dev.parley.chat.spring;

import static dev.parley.chat.spring.CopilotKitSupport.input;
import static dev.parley.chat.spring.CopilotKitSupport.user;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.spring.internal.agui.CopilotKitController;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Who may call the CopilotKit endpoint, over loopback: in {@code parley.owner.mode=HEADER} (a header any page
 * can set) without the host saying a proxy sets it, nobody; a page on another origin only when its origin is
 * listed, with CORS answers for it and for no other. And the endpoint's switches.
 */
@SpringBootTest(classes = TestApplication.class, webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
        properties = {"parley.owner.mode=HEADER", "parley.web.copilotkit.path=/ck",
            "parley.web.copilotkit.allowed-origins=https://app.example.test:8443"})
class CopilotKitOwnerHttpTest {
    private static final String PAGE = "https://app.example.test:8443";

    @LocalServerPort
    int port;

    @Test
    void theOwnerHeaderIsRefusedUnlessTheHostTrustsIt() {
        HttpSupport http = new HttpSupport(port);
        String threadId = UUID.randomUUID().toString();
        HttpSupport.Reply run = http.post("someone", "/api/chat/ck/agent/default/run",
                input(threadId, List.of(user("u-1", "hello")), Map.of()));
        assertThat(run.status()).isEqualTo(403);
        assertThat(run.json().get("error").asText()).isEqualTo("Owner header refused");
        assertThat(run.json().get("message").asText()).contains("parley.web.copilotkit.trust-owner-header");
        assertThat(http.get("someone", "/api/chat/ck/info").status()).isEqualTo(403);
        assertThat(http.get("someone", "/api/chat/ck/threads").status()).isEqualTo(403);
        assertThat(http.post("someone", "/api/chat/ck", "{\"method\":\"info\"}").status()).isEqualTo(403);
        assertThat(http.get("someone", "/api/chat/sessions/" + threadId).status()).as("nothing created").isEqualTo(404);
    }

    @Test
    void aListedOriginGetsPreflightAnswersWithCredentials() throws Exception {
        HttpResponse<String> info = preflight("/api/chat/ck/info", PAGE, "GET", "x-demo-header");
        assertThat(info.statusCode()).isEqualTo(204);
        assertThat(info.headers().firstValue("Access-Control-Allow-Origin")).contains(PAGE);
        assertThat(info.headers().firstValue("Access-Control-Allow-Credentials")).contains("true");
        assertThat(info.headers().firstValue("Access-Control-Allow-Headers")).contains("x-demo-header");
        assertThat(info.headers().allValues("Vary").toString()).contains("Origin");

        HttpResponse<String> run = preflight("/api/chat/ck/agent/default/run", PAGE, "POST",
                "content-type,authorization,x-demo-header");
        assertThat(run.statusCode()).isEqualTo(204);
        assertThat(run.headers().firstValue("Access-Control-Allow-Methods").orElse("")).contains("POST");
        assertThat(run.headers().firstValue("Access-Control-Allow-Headers"))
                .contains("content-type,authorization,x-demo-header");
        assertThat(preflight("/api/chat/ck", PAGE, "POST", "content-type").statusCode()).isEqualTo(204);
        assertThat(preflight("/api/chat/ck/agent/default/stop/t-1", PAGE, "POST", "content-type").statusCode())
                .isEqualTo(204);

        HttpSupport.Reply answer = new HttpSupport(port).send("someone", "POST", "/api/chat/ck/agent/default/run",
                "application/json", input(UUID.randomUUID().toString(), List.of(user("u", "hi")), Map.of()), PAGE);
        assertThat(answer.headers().firstValue("Access-Control-Allow-Origin"))
                .as("the answer itself, here a refusal, is readable by the page").contains(PAGE);
        assertThat(answer.status()).isEqualTo(403);
    }

    @Test
    void anyOtherOriginGetsNoCorsAnswerAndItsPostsAreRefused() throws Exception {
        for (String origin : List.of("https://evil.example.test", "https://app.example.test", "null")) {
            HttpResponse<String> refused = preflight("/api/chat/ck/agent/default/run", origin, "POST", "content-type");
            assertThat(refused.headers().firstValue("Access-Control-Allow-Origin")).as(origin).isEmpty();
        }
        assertThat(preflight("/api/chat/ck/info", PAGE, "DELETE", "content-type").headers()
                .firstValue("Access-Control-Allow-Origin")).as("only GET and POST").isEmpty();
        assertThat(preflight("/api/chat/agui", PAGE, "POST", "content-type").headers()
                .firstValue("Access-Control-Allow-Origin")).as("only the CopilotKit endpoint").isEmpty();
        HttpSupport.Reply post = new HttpSupport(port).send("someone", "POST", "/api/chat/ck",
                "application/json", "{\"method\":\"info\"}", "https://evil.example.test");
        assertThat(post.status()).isEqualTo(403);
        assertThat(post.headers().firstValue("Access-Control-Allow-Origin")).isEmpty();
    }

    private HttpResponse<String> preflight(String path, String origin, String method, String headers)
            throws Exception {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + path))
                .method("OPTIONS", HttpRequest.BodyPublishers.noBody()).header("Origin", origin)
                .header("Access-Control-Request-Method", method).header("Access-Control-Request-Headers", headers)
                .build();
        return HttpSupport.HTTP.send(request, HttpResponse.BodyHandlers.ofString());
    }

    @Test
    void theEndpointIsOnWithTheAgUiEndpointAndSwitchesOffAlone() {
        WebApplicationContextRunner web = new WebApplicationContextRunner()
                .withConfiguration(AutoConfigurations.of(ParleyAutoConfiguration.class, ParleyWebAutoConfiguration.class,
                        ParleyAgUiAutoConfiguration.class))
                .withPropertyValues("parley.owner.mode=HEADER")
                .withBean(dev.parley.chat.runtime.RuntimeAdapter.class,
                        () -> dev.parley.chat.testing.ScriptedRuntime.playing(dev.parley.chat.testing.Scripts.instant("hi")));
        web.run(context -> {
            assertThat(context).hasSingleBean(CopilotKitController.class);
            assertThat(context).hasBean("parleyCopilotKitCors");
        });
        web.withPropertyValues("parley.web.copilotkit.enabled=false").run(context -> {
            assertThat(context).doesNotHaveBean(CopilotKitController.class);
            assertThat(context).doesNotHaveBean("parleyCopilotKitCors");
            assertThat(context).hasBean("parleyAgUiController");
        });
        web.withPropertyValues("parley.web.agui.enabled=false")
                .run(context -> assertThat(context).doesNotHaveBean(CopilotKitController.class));
        web.withPropertyValues("parley.web.copilotkit.allowed-origins=*")
                .run(context -> assertThat(context).hasFailed());
    }
}
