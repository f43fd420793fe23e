package dev.parley.chat.spring;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static com.github.tomakehurst.wiremock.client.WireMock.post;
import static com.github.tomakehurst.wiremock.client.WireMock.postRequestedFor;
import static com.github.tomakehurst.wiremock.client.WireMock.urlEqualTo;
import static com.github.tomakehurst.wiremock.core.WireMockConfiguration.options;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.github.tomakehurst.wiremock.WireMockServer;
import dev.langchain4j.model.chat.StreamingChatModel;
import dev.langchain4j.model.openai.OpenAiStreamingChatModel;
import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.agent.ModelSuggestions;
import dev.parley.chat.engine.AnswerSuggestions;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.SuggestionProvider;
import dev.parley.chat.model.TokenUsage;
import java.util.concurrent.TimeUnit;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.hermes.HermesRuntimeAdapter;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.langchain4j.LangChain4jModelClient;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.ModelOption;
import dev.parley.chat.runtime.RuntimeAdapter;
import dev.parley.chat.spring.internal.ModelLibraryFailureAnalyzer;
import dev.parley.chat.spring.internal.ModelLibraryNotChosen;
import dev.parley.chat.springai.SpringAiModelClient;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import dev.parley.chat.testing.openai.Sse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.ai.chat.model.ChatModel;
import org.springframework.ai.openai.OpenAiChatModel;
import org.springframework.ai.openai.OpenAiChatOptions;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;

/**
 * The agent loop is built from the application's LangChain4j or Spring AI model bean, each a real OpenAI-compatible
 * client on a loopback server; Hermes and a host's runtime win; both libraries and no choice refuse to start.
 */
class ParleyModelAutoConfigurationTest {
    private static final String COMPLETIONS = "/v1/chat/completions";
    private static WireMockServer wiremock;

    private final ApplicationContextRunner runner = new ApplicationContextRunner().withConfiguration(
            AutoConfigurations.of(ParleyHermesAutoConfiguration.class, ParleyModelAutoConfiguration.class,
                    ParleyAutoConfiguration.class));

    @BeforeAll
    static void startServer() {
        wiremock = new WireMockServer(options().dynamicPort().bindAddress("127.0.0.1"));
        wiremock.start();
    }

    @AfterAll
    static void stopServer() {
        wiremock.stop();
    }

    @BeforeEach
    void answerEveryCall() {
        wiremock.resetAll();
        wiremock.stubFor(post(urlEqualTo(COMPLETIONS)).willReturn(aResponse().withStatus(200)
                .withHeader("Content-Type", "text/event-stream")
                .withBody(Sse.stream().text("Hello ", "from ", "the model.").finish("stop").usage(12, 4).done())));
    }

    private static String baseUrl() {
        return "http://127.0.0.1:" + wiremock.port() + "/v1";
    }

    /** LangChain4j's OpenAI model whose own model name is {@code lc4j-default}. */
    static StreamingChatModel langChain4jModel() {
        return OpenAiStreamingChatModel.builder().baseUrl(baseUrl()).apiKey("sk-test-key").modelName("lc4j-default")
                .timeout(Duration.ofSeconds(10)).build();
    }

    /** Spring AI's OpenAI model whose own model name is {@code spring-ai-default}. */
    static ChatModel springAiModel() {
        return OpenAiChatModel.builder().options(OpenAiChatOptions.builder().baseUrl(baseUrl()).apiKey("sk-test-key")
                .model("spring-ai-default").maxRetries(0).timeout(Duration.ofSeconds(10)).build()).build();
    }

    /** Runs one turn on the context's engine; the answer, and the model name the server was asked for. */
    private static String[] oneTurn(ApplicationContext context, NewThread thread) {
        ChatEngine engine = context.getBean(ChatEngine.class);
        String threadId = engine.createThread("u", thread).id();
        String runId = engine.startRun("u", threadId, StartRun.of("hello model")).runId();
        Run run = Await.until(() -> engine.state("u", runId).run(), r -> r.status().isTerminal(), "the run to end");
        assertThat(run.status()).as("%s", run.error()).isEqualTo(RunStatus.SUCCEEDED);
        String answer = ((AssistantMessage) context.getBean(ChatStore.class).findMessage(run.assistantMessageId())
                .orElseThrow()).text();
        return new String[] {answer, lastRequest().get("model").asText()};
    }

    private static JsonNode lastRequest() {
        var requests = wiremock.findAll(postRequestedFor(urlEqualTo(COMPLETIONS)));
        assertThat(requests).isNotEmpty();
        return ChatJson.shared().readTree(requests.get(requests.size() - 1).getBodyAsString());
    }

    @Test
    void aLangChain4jModelBeanRunsTheAgentLoopWithTheConfiguredModelsAndSkills(@TempDir Path skills) throws Exception {
        Files.createDirectories(skills.resolve("pirate"));
        Files.writeString(skills.resolve("pirate/SKILL.md"), "---\nname: Pirate\ndescription: Talks like one\n---\nSpeak like a pirate.");
        runner.withBean(StreamingChatModel.class, ParleyModelAutoConfigurationTest::langChain4jModel)
                .withPropertyValues("parley.agent.models[0].id=llama3.2", "parley.agent.models[0].name=Llama 3.2",
                        "parley.agent.models[0].provider=ollama", "parley.agent.models[1].id=qwen3",
                        "parley.agent.skills-dir=" + skills, "parley.agent.max-iterations=3")
                .run(context -> {
                    assertThat(context).hasSingleBean(AgentLoopRuntime.class).doesNotHaveBean(HermesRuntimeAdapter.class);
                    ChatEngine engine = context.getBean(ChatEngine.class);
                    assertThat(engine.models()).containsExactly(new ModelOption("llama3.2", "Llama 3.2", "ollama"),
                            new ModelOption("qwen3", "qwen3", null));
                    assertThat(engine.skills()).singleElement().satisfies(s -> {
                        assertThat(s.id()).isEqualTo("pirate");
                        assertThat(s.name()).isEqualTo("Pirate");
                    });

                    String[] turn = oneTurn(context, new NewThread(null, "qwen3", "pirate"));
                    assertThat(turn[0]).isEqualTo("Hello from the model.");
                    assertThat(turn[1]).isEqualTo("qwen3");
                    JsonNode messages = lastRequest().get("messages");
                    assertThat(messages.get(0).get("role").asText()).isEqualTo("system");
                    assertThat(messages.get(0).get("content").asText()).contains("Speak like a pirate.");
                    assertThat(messages.get(messages.size() - 1).get("content").asText()).isEqualTo("hello model");
                });
    }

    @Test
    void withModelSuggestionsOnTheModelIsAskedOnceMoreAfterTheAnswerWithItsOwnModelId() {
        runner.withBean(StreamingChatModel.class, ParleyModelAutoConfigurationTest::langChain4jModel)
                .withPropertyValues("parley.suggestions.model.enabled=true", "parley.suggestions.model.model-id=tiny",
                        "parley.suggestions.max=2")
                .run(context -> {
                    assertThat(context).hasSingleBean(ModelSuggestions.class);
                    ChatEngine engine = context.getBean(ChatEngine.class);
                    String threadId = engine.createThread("u", NewThread.empty()).id();
                    RunTicket ticket = engine.startRun("u", threadId, StartRun.of("hello model"));
                    AnswerSuggestions found = engine.suggestions("u", ticket.assistantMessageId(), Duration.ofSeconds(10))
                            .get(15, TimeUnit.SECONDS);
                    assertThat(found.prompts()).containsExactly("Hello from the model.");
                    AssistantMessage answer = (AssistantMessage) context.getBean(ChatStore.class)
                            .findMessage(ticket.assistantMessageId()).orElseThrow();
                    assertThat(answer.suggestions().usage()).isEqualTo(new TokenUsage(12, 4, 16));
                    JsonNode suggestionCall = lastRequest();
                    assertThat(suggestionCall.get("model").asText()).isEqualTo("tiny");
                    assertThat(suggestionCall.get("messages").get(0).get("content").asText()).contains("up to 2");
                    assertThat(wiremock.findAll(postRequestedFor(urlEqualTo(COMPLETIONS)))).hasSize(2);
                });
    }

    @Test
    void modelSuggestionsAreOffByDefault() {
        runner.withBean(StreamingChatModel.class, ParleyModelAutoConfigurationTest::langChain4jModel).run(context -> {
            assertThat(context).doesNotHaveBean(SuggestionProvider.class);
            oneTurn(context, NewThread.empty());
            Thread.sleep(300);
            assertThat(wiremock.findAll(postRequestedFor(urlEqualTo(COMPLETIONS)))).as("the answer's call only").hasSize(1);
        });
    }

    @Test
    void theSystemPromptPropertyGoesFirstAndASkillsTextAfterIt(@TempDir Path skills) throws Exception {
        Files.createDirectories(skills.resolve("pirate"));
        Files.writeString(skills.resolve("pirate/SKILL.md"), "---\nname: Pirate\ndescription: Talks like one\n---\nSpeak like a pirate.");
        runner.withBean(ChatModel.class, ParleyModelAutoConfigurationTest::springAiModel)
                .withPropertyValues("parley.agent.system-prompt=You answer for Parcel & Co.",
                        "parley.agent.skills-dir=" + skills)
                .run(context -> {
                    oneTurn(context, NewThread.empty());
                    JsonNode plain = lastRequest().get("messages");
                    assertThat(plain.get(0).get("role").asText()).isEqualTo("system");
                    assertThat(plain.get(0).get("content").asText()).isEqualTo("You answer for Parcel & Co.");

                    oneTurn(context, new NewThread(null, null, "pirate"));
                    String withSkill = lastRequest().get("messages").get(0).get("content").asText();
                    assertThat(withSkill).startsWith("You answer for Parcel & Co.\n\n").contains("Speak like a pirate.");
                });
    }

    @Test
    void aSpringAiModelBeanRunsTheAgentLoopOnTheModelsOwnModel() {
        runner.withBean(ChatModel.class, ParleyModelAutoConfigurationTest::springAiModel).run(context -> {
            assertThat(context).hasSingleBean(AgentLoopRuntime.class);
            ChatEngine engine = context.getBean(ChatEngine.class);
            assertThat(engine.models()).isEmpty();
            String[] turn = oneTurn(context, NewThread.empty());
            assertThat(turn[0]).isEqualTo("Hello from the model.");
            assertThat(turn[1]).isEqualTo("spring-ai-default");
        });
    }

    @Test
    void bothLibrariesWithoutAChoiceRefuseToStartNamingTheProperty() {
        runner.withBean(StreamingChatModel.class, ParleyModelAutoConfigurationTest::langChain4jModel)
                .withBean(ChatModel.class, ParleyModelAutoConfigurationTest::springAiModel)
                .run(context -> {
                    assertThat(context).hasFailed();
                    Throwable failure = context.getStartupFailure();
                    FailureAnalysis analysis = new ModelLibraryFailureAnalyzer().analyze(failure);
                    assertThat(analysis).isNotNull();
                    assertThat(analysis.getDescription()).contains("LANGCHAIN4J: OpenAiStreamingChatModel",
                            "SPRING_AI: OpenAiChatModel");
                    assertThat(analysis.getAction()).contains("parley.agent.library=LANGCHAIN4J",
                            "parley.agent.library=SPRING_AI", "parley.hermes.base-url");
                    assertThat(analysis.getCause()).isInstanceOf(ModelLibraryNotChosen.class);
                });
    }

    @Test
    void bothLibrariesAndAChoiceRunOnTheChosenOne() {
        runner.withBean(StreamingChatModel.class, ParleyModelAutoConfigurationTest::langChain4jModel)
                .withBean(ChatModel.class, ParleyModelAutoConfigurationTest::springAiModel)
                .withPropertyValues("parley.agent.library=spring-ai")
                .run(context -> assertThat(oneTurn(context, NewThread.empty())[1])
                        .isEqualTo("spring-ai-default"));
        runner.withBean(StreamingChatModel.class, ParleyModelAutoConfigurationTest::langChain4jModel)
                .withBean(ChatModel.class, ParleyModelAutoConfigurationTest::springAiModel)
                .withPropertyValues("parley.agent.library=LANGCHAIN4J")
                .run(context -> assertThat(oneTurn(context, NewThread.empty())[1])
                        .isEqualTo("lc4j-default"));
    }

    @Test
    void aChosenLibraryWithoutItsModelRefusesToStart() {
        runner.withBean(ChatModel.class, ParleyModelAutoConfigurationTest::springAiModel)
                .withPropertyValues("parley.agent.library=LANGCHAIN4J")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("parley.agent.library is LANGCHAIN4J")
                        .hasMessageContaining("no LangChain4j StreamingChatModel bean"));
    }

    @Test
    void badSettingsRefuseToStartNamingTheProperty() {
        runner.withBean(StreamingChatModel.class, ParleyModelAutoConfigurationTest::langChain4jModel)
                .withPropertyValues("parley.agent.max-iterations=0")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("parley.agent.max-iterations must be positive"));
        runner.withBean(StreamingChatModel.class, ParleyModelAutoConfigurationTest::langChain4jModel)
                .withPropertyValues("parley.agent.models[0].name=Nameless")
                .run(context -> assertThat(context).hasFailed().getFailure().rootCause()
                        .hasMessageContaining("every parley.agent.models entry needs an id"));
    }

    @Test
    void hermesConfiguredWinsOverAModelBean() {
        runner.withBean(StreamingChatModel.class, ParleyModelAutoConfigurationTest::langChain4jModel)
                .withPropertyValues("parley.hermes.base-url=http://127.0.0.1:9")
                .run(context -> {
                    assertThat(context).hasSingleBean(RuntimeAdapter.class).hasSingleBean(HermesRuntimeAdapter.class);
                    assertThat(context).doesNotHaveBean(AgentLoopRuntime.class);
                });
    }

    @Test
    void aHostRuntimeWinsOverAModelBean() {
        ScriptedRuntime host = ScriptedRuntime.of(request -> Scripts.answer("host"));
        runner.withBean(StreamingChatModel.class, ParleyModelAutoConfigurationTest::langChain4jModel)
                .withBean(RuntimeAdapter.class, () -> host)
                .run(context -> {
                    assertThat(context.getBean(RuntimeAdapter.class)).isSameAs(host);
                    assertThat(context).doesNotHaveBean(AgentLoopRuntime.class);
                });
    }

    @Test
    void withoutTheAdapterOnTheClasspathAModelBeanIsLeftAlone() {
        runner.withBean(StreamingChatModel.class, ParleyModelAutoConfigurationTest::langChain4jModel)
                .withBean(ChatModel.class, ParleyModelAutoConfigurationTest::springAiModel)
                .withClassLoader(new FilteredClassLoader(LangChain4jModelClient.class, SpringAiModelClient.class))
                .run(context -> {
                    assertThat(context).hasNotFailed().doesNotHaveBean(RuntimeAdapter.class);
                    assertThat(context).doesNotHaveBean(ChatEngine.class);
                });
    }

    @Test
    void twoModelsOfOneLibraryWithNonePrimaryAreNotPicked() {
        runner.withBean("first", StreamingChatModel.class, ParleyModelAutoConfigurationTest::langChain4jModel)
                .withBean("second", StreamingChatModel.class, ParleyModelAutoConfigurationTest::langChain4jModel)
                .run(context -> assertThat(context).hasNotFailed().doesNotHaveBean(RuntimeAdapter.class));
        runner.withBean("first", StreamingChatModel.class, ParleyModelAutoConfigurationTest::langChain4jModel,
                        definition -> definition.setPrimary(true))
                .withBean("second", StreamingChatModel.class, ParleyModelAutoConfigurationTest::langChain4jModel)
                .run(context -> assertThat(context).hasSingleBean(AgentLoopRuntime.class));
    }

    @Test
    void withoutAModelThereIsNoRuntime() {
        runner.run(context -> {
            assertThat(context).doesNotHaveBean(RuntimeAdapter.class).doesNotHaveBean(ChatEngine.class);
            assertThat(context).hasSingleBean(ChatStore.class);
        });
    }
}
