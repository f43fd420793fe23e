package dev.parley.chat.spring;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.github.tomakehurst.wiremock.WireMockServer;
import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.openai.Sse;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Configuration;

/**
 * An application that adds {@code spring-ai-starter-model-openai} and configures it with {@code spring.ai.openai.*}
 * (no model bean of its own) gets the agent loop on the {@code ChatModel} Spring AI's auto-configuration makes: the
 * context is built by {@code @EnableAutoConfiguration} from everything on the classpath, as the application's is.
 * Spring AI's chat model auto-configurations declare no order of their own, and sort after Parley's by name.
 */
class SpringAiAutoConfiguredModelTest {
    private static final String COMPLETIONS = "/v1/chat/completions";
    private static final WireMockServer OPENAI = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));

    @BeforeAll
    static void startServer() {
        OPENAI.start();
        OPENAI.stubFor(post(urlEqualTo(COMPLETIONS)).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream")
                .withBody(Sse.stream().text("Hello ", "from Spring AI.").finish("stop").usage(9, 4).done())));
    }

    @AfterAll
    static void stopServer() {
        OPENAI.stop();
    }

    /** An application with Parley's starter and Spring AI's OpenAI starter, and no model bean of its own. */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    static class Application {
    }

    @Test
    void theChatModelSpringAiAutoConfiguresRunsTheAgentLoop() throws Exception {
        new ApplicationContextRunner().withUserConfiguration(Application.class)
                .withPropertyValues("spring.datasource.url=jdbc:sqlite:target/spring-ai-auto-" + UUID.randomUUID() + ".db",
                        "spring.ai.openai.base-url=http://127.0.0.1:" + OPENAI.port() + "/v1",
                        "spring.ai.openai.api-key=sk-test-key", "spring.ai.openai.chat.options.model=auto-configured")
                .run(context -> {
                    assertThat(context).hasNotFailed().hasSingleBean(ChatModel.class);
                    assertThat(context).hasSingleBean(AgentLoopRuntime.class);
                    ChatEngine engine = context.getBean(ChatEngine.class);
                    String threadId = engine.createThread("u", NewThread.empty()).id();
                    String runId = engine.startRun("u", threadId, StartRun.of("hello")).runId();
                    Run run = Await.until(() -> engine.state("u", runId).run(), r -> r.status().isTerminal(),
                            "the run to end");

                    assertThat(run.status()).as("%s", run.error()).isEqualTo(RunStatus.SUCCEEDED);
                    assertThat(((AssistantMessage) context.getBean(ChatStore.class)
                            .findMessage(run.assistantMessageId()).orElseThrow()).text())
                            .isEqualTo("Hello from Spring AI.");
                    var sent = OPENAI.findAll(postRequestedFor(urlEqualTo(COMPLETIONS)));
                    assertThat(ChatJson.shared().readTree(sent.get(sent.size() - 1).getBodyAsString())
                            .get("model").asText()).isEqualTo("auto-configured");
                });
    }
}
