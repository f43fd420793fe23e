package dev.parley.chat.testing.openai;

import static com.github.tomakehurst.wiremock.client.WireMock.aResponse;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.agent.ModelClient;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.HostActionApproval;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.input.ApprovalAnswer;
import dev.parley.chat.input.ApprovalDecision;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.StatusMessage;
import dev.parley.chat.model.ThinkingMessage;
import dev.parley.chat.model.TokenUsage;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.runtime.SkillOption;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * The whole engine over a {@link ModelClient} adapter and an OpenAI-compatible server on loopback: host actions and
 * their results, a tool-call id the model repeats, a denied approval, a thread's history and the system prompts on
 * the wire, cancel mid-stream, a server that dies mid-answer, an answer cut at the length limit, and a provider
 * failure as the run's error. An adapter's test extends this class once and returns its client from
 * {@link #client(String)}.
 */
public abstract class ModelEngineContract extends OpenAiWire {
    private static final String ALICE = "alice";
    private static final HostToolSpec LOOKUP = new HostToolSpec("lookup_order", "Finds an order",
            "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}}}");
    private static final HostToolSpec REFUND = new HostToolSpec("refund", "Refunds an order",
            "{\"type\":\"object\",\"properties\":{\"order\":{\"type\":\"integer\"}}}");

    private final InMemoryChatStore store = new InMemoryChatStore();
    private final List<String> lookups = new CopyOnWriteArrayList<>();
    private final List<String> refunds = new CopyOnWriteArrayList<>();

    /** The adapter's client on an OpenAI-compatible server at {@code baseUrl}, with API key {@code sk-test-key}. */
    protected abstract ModelClient client(String baseUrl);

    private ChatEngine engine() {
        return engine(baseUrl(), runtime -> runtime);
    }

    private ChatEngine engine(String modelBaseUrl, UnaryOperator<AgentLoopRuntime.Builder> runtime) {
        return ChatEngine.builder().store(store)
                .runtime(runtime.apply(AgentLoopRuntime.builder(client(modelBaseUrl))
                        .systemPrompts(List.of(new SkillOption("support", "Support", "answers customers")),
                                skill -> "You answer customers of a parcel shop."))
                        .build())
                .limits(EngineLimits.defaults().withCancelGracePeriod(Duration.ofMillis(500)))
                .hostAction(new HostAction(LOOKUP, call -> {
                    lookups.add(call.arguments());
                    return call.arguments().contains("43") ? "{\"status\":\"lost\"}" : "{\"status\":\"shipped\"}";
                }))
                .hostAction(new HostAction(REFUND, call -> {
                    refunds.add(call.arguments());
                    return "refunded";
                }, HostActionApproval.always(call -> "Refund order 9")))
                .build();
    }

    private Run until(ChatEngine engine, String runId, RunStatus status) {
        return Await.until(() -> engine.state(ALICE, runId).run(), r -> r.status() == status, "the run to be " + status);
    }

    private String answer(Run run) {
        return ((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text();
    }

    @Test
    void aHostActionIsCalledAndItsResultGoesBackToTheModel() {
        replies(Sse.stream().reasoning("Look it", " up.").text("Checking.")
                        .toolCall(0, "call_1", "lookup_order", "{\"id\":", "42}").finish("tool_calls").usage(20, 5).done(),
                Sse.stream().text("It has ", "shipped.").finish("stop").usage(30, 4).done());
        try (ChatEngine engine = engine()) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("where is order 42?"));
            Run run = until(engine, ticket.runId(), RunStatus.SUCCEEDED);

            assertThat(lookups).containsExactly("{\"id\":42}");
            assertThat(answer(run)).isEqualTo("Checking.\n\nIt has shipped.");
            assertThat(run.usage()).isEqualTo(new TokenUsage(50, 9, 59));
            assertThat(store.listStepMessagesAfter(run.id(), null, 1_000)).filteredOn(ThinkingMessage.class::isInstance)
                    .extracting(m -> ((ThinkingMessage) m).text()).containsExactly("Look it up.");
            List<JsonNode> sent = requests();
            assertThat(sent).hasSize(2);
            JsonNode messages = sent.get(1).path("messages");
            assertThat(messages).extracting(m -> m.path("role").asText()).containsExactly("user", "assistant", "tool");
            assertThat(messages.get(1).path("content").asText()).isEqualTo("Checking.");
            JsonNode call = messages.get(1).path("tool_calls").get(0);
            assertThat(call.path("id").asText()).isEqualTo("call_1");
            assertThat(call.path("function").path("name").asText()).isEqualTo("lookup_order");
            assertThat(call.path("function").path("arguments").asText()).isEqualTo("{\"id\":42}");
            assertThat(messages.get(2).path("tool_call_id").asText()).isEqualTo("call_1");
            assertThat(messages.get(2).path("content").asText()).isEqualTo("{\"status\":\"shipped\"}");
        }
    }

    @Test
    void aDeniedApprovalGoesBackToTheModelAndTheActionNeverRuns() {
        replies(Sse.stream().toolCall(0, "call_r", "refund", "{\"order\":", "9}").finish("tool_calls").done(),
                Sse.stream().text("Understood, ", "no refund.").finish("stop").done());
        try (ChatEngine engine = engine()) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("refund order 9"));
            PendingInput asked = Await.until(() -> engine.state(ALICE, ticket.runId()).pendingInputs(),
                    pending -> !pending.isEmpty(), "the approval").get(0);
            assertThat(asked.kind()).isEqualTo(InputKind.APPROVAL);

            engine.answer(ALICE, ticket.runId(), asked.inputId(), ApprovalAnswer.of(ApprovalDecision.DENY));
            Run run = until(engine, ticket.runId(), RunStatus.SUCCEEDED);

            assertThat(refunds).isEmpty();
            assertThat(answer(run)).isEqualTo("Understood, no refund.");
            JsonNode toolMessage = requests().get(1).path("messages").get(2);
            assertThat(toolMessage.path("role").asText()).isEqualTo("tool");
            assertThat(toolMessage.path("tool_call_id").asText()).isEqualTo("call_r");
            assertThat(toolMessage.path("content").asText()).isEqualTo("the person denied this call of refund");
        }
    }

    @Test
    void theThirdTurnCarriesTheFirstTwoAndTheSkillsPrompt() {
        replies(Sse.stream().text("Hello", " Alice.").finish("stop").done(),
                Sse.stream().text("Parcel ", "42 is late.").finish("stop").done(),
                Sse.stream().text("You are welcome.").finish("stop").done());
        try (ChatEngine engine = engine()) {
            String threadId = engine.createThread(ALICE, new NewThread(null, null, "support")).id();
            for (String text : List.of("hi, I am Alice", "where is parcel 42?", "thanks")) {
                until(engine, engine.startRun(ALICE, threadId, StartRun.of(text)).runId(), RunStatus.SUCCEEDED);
            }

            JsonNode third = requests().get(2).path("messages");
            assertMessagesSent(third, "[{\"role\":\"system\",\"content\":\"You answer customers of a parcel"
                    + " shop.\"},{\"role\":\"user\",\"content\":\"hi, I am Alice\"},{\"role\":\"assistant\",\"content\":"
                    + "\"Hello Alice.\"},{\"role\":\"user\",\"content\":\"where is parcel 42?\"},{\"role\":\"assistant\","
                    + "\"content\":\"Parcel 42 is late.\"},{\"role\":\"user\",\"content\":\"thanks\"}]");
        }
    }

    @Test
    void aCancelMidStreamEndsTheRunCancelledWithThePartialAnswer() {
        String[] pieces = new String[40];
        for (int i = 0; i < pieces.length; i++) {
            pieces[i] = "w" + i + " ";
        }
        reply(sse(Sse.stream().text(pieces).finish("stop").done()).withChunkedDribbleDelay(40, 4000));
        try (ChatEngine engine = engine()) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("talk"));
            Await.until(() -> answer(engine.state(ALICE, ticket.runId()).run()), text -> !text.isEmpty(), "some text");

            engine.cancel(ALICE, ticket.runId());
            Run run = until(engine, ticket.runId(), RunStatus.CANCELLED);

            assertThat(answer(run)).startsWith("w0 ").doesNotContain("w39");
        }
    }

    @Test
    void aRateLimitFailsTheRunWithItsCodeAndWhenToRetryWhereTheLibrarySaysIt() {
        reply(aResponse().withStatus(429).withHeader("Content-Type", "application/json").withHeader("Retry-After", "20")
                .withBody("{\"error\":{\"message\":\"Rate limit reached\",\"code\":\"rate_limit_exceeded\"}}"));
        try (ChatEngine engine = engine()) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            Run run = until(engine, engine.startRun(ALICE, threadId, StartRun.of("hi")).runId(), RunStatus.FAILED);

            assertThat(run.error().code()).isEqualTo("RATE_LIMITED");
            assertThat(run.error().message()).contains("Rate limit reached");
            if (carriesRetryAfter()) {
                assertThat(run.error().message()).endsWith("(retry after 20 s)");
                assertThat(run.error().retryAfterSeconds()).isEqualTo(20L);
            } else {
                assertThat(run.error().message()).doesNotContain("retry after");
                assertThat(run.error().retryAfterSeconds()).isNull();
            }
        }
    }

    /**
     * Whether the adapter's library hands on a failed response's headers, so that a 429's {@code Retry-After}
     * reaches the run's error (default yes).
     */
    protected boolean carriesRetryAfter() {
        return true;
    }

    @Test
    void aServerThatDiesMidAnswerFailsTheRunAndKeepsThePartialAnswer() throws Exception {
        try (CutOffServer dying = new CutOffServer(Sse.stream().text("Your parcel ", "left Oslo and is now in").partial());
                ChatEngine engine = engine(dying.baseUrl(), runtime -> runtime)) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            String runId = engine.startRun(ALICE, threadId, StartRun.of("where?")).runId();
            Run ended = Await.until(() -> engine.state(ALICE, runId).run(), r -> r.status().isTerminal(), "the end");

            assertThat(ended.status()).isEqualTo(RunStatus.FAILED);
            assertThat(ended.error().code()).isEqualTo("RUNTIME_UNAVAILABLE");
            assertThat(answer(ended)).isEqualTo("Your parcel left Oslo and is now in");
        }
    }

    @Test
    void anAnswerCutAtTheLengthLimitSucceedsWithAWarningStatus() {
        replies(Sse.stream().text("First, the ", "parcel was").finish("length").usage(10, 4).done());
        try (ChatEngine engine = engine()) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            Run run = until(engine, engine.startRun(ALICE, threadId, StartRun.of("explain")).runId(), RunStatus.SUCCEEDED);

            assertThat(answer(run)).isEqualTo("First, the parcel was");
            assertThat(store.listStepMessagesAfter(run.id(), null, 1_000)).filteredOn(StatusMessage.class::isInstance)
                    .singleElement().satisfies(m -> {
                        assertThat(((StatusMessage) m).level()).isEqualTo("warn");
                        assertThat(((StatusMessage) m).text()).contains("length limit");
                    });
        }
    }

    @Test
    void aToolCallIdTheModelRepeatsRunsTheActionAgainAndTheModelGetsTheNewResult() {
        replies(Sse.stream().toolCall(0, "call_0", "lookup_order", "{\"id\":42}").finish("tool_calls").done(),
                Sse.stream().toolCall(0, "call_0", "lookup_order", "{\"id\":43}").finish("tool_calls").done(),
                Sse.stream().text("42 shipped, 43 is lost.").finish("stop").done());
        try (ChatEngine engine = engine()) {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            Run run = until(engine, engine.startRun(ALICE, threadId, StartRun.of("orders 42 and 43?")).runId(),
                    RunStatus.SUCCEEDED);

            assertThat(lookups).containsExactly("{\"id\":42}", "{\"id\":43}");
            JsonNode messages = requests().get(2).path("messages");
            assertThat(messages).extracting(m -> m.path("role").asText())
                    .containsExactly("user", "assistant", "tool", "assistant", "tool");
            assertThat(messages.get(4).path("tool_call_id").asText()).isEqualTo("call_0");
            assertThat(messages.get(4).path("content").asText()).isEqualTo("{\"status\":\"lost\"}");
            assertThat(answer(run)).isEqualTo("42 shipped, 43 is lost.");
        }
    }

    @Test
    void theDefaultSystemPromptGoesFirstAndTheSkillsAfterIt() {
        reply(sse(Sse.stream().text("Hello.").finish("stop").done()));
        try (ChatEngine engine = engine(baseUrl(), runtime -> runtime.systemPrompt("You work for Parcel & Co."))) {
            until(engine, engine.startRun(ALICE, engine.createThread(ALICE, NewThread.empty()).id(), StartRun.of("hi"))
                    .runId(), RunStatus.SUCCEEDED);
            until(engine, engine.startRun(ALICE, engine.createThread(ALICE, new NewThread(null, null, "support")).id(),
                    StartRun.of("hi")).runId(), RunStatus.SUCCEEDED);

            assertMessagesSent(requests().get(0).path("messages"), "[{\"role\":\"system\",\"content\":\"You work for"
                    + " Parcel & Co.\"},{\"role\":\"user\",\"content\":\"hi\"}]");
            assertThat(requests().get(1).path("messages").get(0).path("content").asText())
                    .isEqualTo("You work for Parcel & Co.\n\nYou answer customers of a parcel shop.");
        }
    }
}
