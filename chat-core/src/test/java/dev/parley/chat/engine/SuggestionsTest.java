package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.ErrorCode;
import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.agent.ModelSuggestions;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.model.Suggestions;
import dev.parley.chat.model.TokenUsage;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.ScriptedModel;
import dev.parley.chat.testing.ScriptedRuntime;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Follow-up suggestions: made after a run, stored with its answer, throttled per thread, never failing a run. */
class SuggestionsTest extends EngineTestSupport {
    private static final ScriptedRuntime.Script ECHO = (request, p) -> {
        p.text("re: " + request.userMessage());
        p.finish();
    };

    private RunTicket send(ChatEngine engine, String threadId, String text) {
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of(text));
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
        return ticket;
    }

    private AssistantMessage answer(String id) {
        return (AssistantMessage) store.findMessage(id).orElseThrow();
    }

    private AssistantMessage awaitSuggestions(String id) {
        return Await.until(() -> answer(id), a -> a.suggestions() != null, "suggestions on " + id);
    }

    @Test
    void aProvidersSuggestionsAreStoredWithTheAnswerAndShownInTheThreadView() throws Exception {
        List<SuggestionRequest> asked = new CopyOnWriteArrayList<>();
        ChatEngine engine = engine(ScriptedRuntime.playing(ECHO), b -> b.maxSuggestions(2).suggestions(request -> {
            asked.add(request);
            return Suggestions.of(List.of("  Tell me more ", "", "Tell me more", "Why?", "And then?"));
        }));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = send(engine, threadId, "hello");

        AnswerSuggestions found = engine.suggestions(ALICE, ticket.assistantMessageId(), Duration.ofSeconds(10))
                .get(15, TimeUnit.SECONDS);
        assertThat(found.prompts()).as("stripped, blank and repeated ones dropped, at most 2")
                .containsExactly("Tell me more", "Why?");
        assertThat(found.pending()).isFalse();
        assertThat(asked).singleElement().satisfies(r -> {
            assertThat(r.question()).isEqualTo("hello");
            assertThat(r.answer()).isEqualTo("re: hello");
            assertThat(r.ownerId()).isEqualTo(ALICE);
            assertThat(r.maxSuggestions()).isEqualTo(2);
        });

        AssistantMessage inView = (AssistantMessage) engine.getThread(ALICE, threadId).messages().stream()
                .filter(m -> m.id().equals(ticket.assistantMessageId())).findFirst().orElseThrow();
        assertThat(inView.suggestions().prompts()).containsExactly("Tell me more", "Why?");
        assertThat(ChatJson.shared().write(inView)).contains("\"suggestions\":{\"prompts\":[\"Tell me more\",\"Why?\"]}");
        assertThat(ChatJson.shared().readMessage(ChatJson.shared().write(inView)))
                .isEqualTo(inView);
    }

    @Test
    void askedWhileTheAnswerIsBeingWrittenTheyAreWaitedForUntilTheRunEnds() throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        ChatEngine engine = engine(ScriptedRuntime.playing((request, p) -> {
            p.text("working");
            go.await(10, TimeUnit.SECONDS);
            p.finish();
        }), b -> b.suggestions(request -> Suggestions.of(List.of("next"))));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("hello"));
        assertThat(engine.suggestions(ALICE, ticket.assistantMessageId(), Duration.ZERO).get(1, TimeUnit.SECONDS).pending())
                .as("the answer is still being written").isTrue();
        CompletableFuture<AnswerSuggestions> waited = engine.suggestions(ALICE, ticket.assistantMessageId(),
                Duration.ofSeconds(20));
        assertThat(waited).isNotDone();
        go.countDown();
        assertThat(waited.get(15, TimeUnit.SECONDS).prompts()).containsExactly("next");
    }

    @Test
    void withoutAProviderNothingIsPendingAndTheJsonHasNoSuggestions() throws Exception {
        ChatEngine engine = engine(ScriptedRuntime.playing(ECHO));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = send(engine, threadId, "hello");
        AnswerSuggestions found = engine.suggestions(ALICE, ticket.assistantMessageId(), Duration.ofSeconds(30))
                .get(2, TimeUnit.SECONDS);
        assertThat(found.prompts()).isEmpty();
        assertThat(found.pending()).isFalse();
        assertThat(ChatJson.shared().write(answer(ticket.assistantMessageId()))).doesNotContain("suggestions");
    }

    @Test
    void aFailingProviderDoesNotFailTheRunAndItsAnswerHasNone() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        ChatEngine engine = engine(ScriptedRuntime.playing(ECHO), b -> b.suggestions(request -> {
            calls.incrementAndGet();
            throw new IllegalStateException("secret text of the conversation");
        }));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = send(engine, threadId, "hello");
        AnswerSuggestions found = engine.suggestions(ALICE, ticket.assistantMessageId(), Duration.ofSeconds(10))
                .get(15, TimeUnit.SECONDS);
        assertThat(calls).hasValue(1);
        assertThat(found.prompts()).isEmpty();
        assertThat(found.pending()).isFalse();
        assertThat(engine.state(ALICE, ticket.runId()).run().status()).isEqualTo(RunStatus.SUCCEEDED);
        assertThat(answer(ticket.assistantMessageId()).suggestions()).isNull();
        send(engine, threadId, "again");
        Await.until(calls::get, n -> n == 2, "the next answer to be asked for again");
    }

    @Test
    void aProviderThatHangsIsAbandonedAfterTheTimeout() throws Exception {
        CountDownLatch interrupted = new CountDownLatch(1);
        ChatEngine engine = engine(ScriptedRuntime.playing(ECHO), b -> b.suggestionTimeout(Duration.ofMillis(200))
                .suggestions(request -> {
                    try {
                        Thread.sleep(60_000);
                    } catch (InterruptedException e) {
                        interrupted.countDown();
                        throw e;
                    }
                    return Suggestions.of(List.of("too late"));
                }));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = send(engine, threadId, "hello");
        AnswerSuggestions found = engine.suggestions(ALICE, ticket.assistantMessageId(), Duration.ofSeconds(10))
                .get(15, TimeUnit.SECONDS);
        assertThat(found.prompts()).isEmpty();
        assertThat(found.pending()).isFalse();
        assertThat(interrupted.await(5, TimeUnit.SECONDS)).as("the provider's worker interrupted").isTrue();
    }

    @Test
    void oneCallPerThreadAtATimeAndAResultForAnAnswerNoLongerLastIsDropped() throws Exception {
        AtomicInteger concurrent = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        CountDownLatch firstAsked = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        List<String> askedFor = new CopyOnWriteArrayList<>();
        ChatEngine engine = engine(ScriptedRuntime.playing(ECHO), b -> b.suggestions(request -> {
            int now = concurrent.incrementAndGet();
            most.accumulateAndGet(now, Math::max);
            askedFor.add(request.question());
            try {
                if (request.question().equals("first")) {
                    firstAsked.countDown();
                    release.await(20, TimeUnit.SECONDS);
                }
                return Suggestions.of(List.of("after " + request.question()));
            } finally {
                concurrent.decrementAndGet();
            }
        }));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket first = send(engine, threadId, "first");
        assertThat(firstAsked.await(10, TimeUnit.SECONDS)).isTrue();
        CompletableFuture<AnswerSuggestions> firstFound = engine.suggestions(ALICE, first.assistantMessageId(),
                Duration.ofSeconds(20));

        RunTicket second = send(engine, threadId, "second");
        RunTicket third = send(engine, threadId, "third");
        AnswerSuggestions pendingThird = engine.suggestions(ALICE, third.assistantMessageId(), Duration.ZERO)
                .get(1, TimeUnit.SECONDS);
        assertThat(pendingThird.pending()).as("waiting for the call in flight").isTrue();
        assertThat(askedFor).as("nothing asked while the first call is in flight").containsExactly("first");

        release.countDown();
        AssistantMessage thirdAnswer = awaitSuggestions(third.assistantMessageId());
        assertThat(thirdAnswer.suggestions().prompts()).containsExactly("after third");
        assertThat(firstFound.get(10, TimeUnit.SECONDS).prompts()).as("the first answer's result was dropped").isEmpty();
        assertThat(answer(first.assistantMessageId()).suggestions()).isNull();
        assertThat(answer(second.assistantMessageId()).suggestions()).as("an older waiting answer is skipped").isNull();
        assertThat(askedFor).containsExactly("first", "third");
        assertThat(most).as("never two calls at once on one thread").hasValue(1);
    }

    @Test
    void anotherOwnersSuggestionsAreNotFoundAndOnlyAnswersHaveThem() throws Exception {
        ChatEngine engine = engine(ScriptedRuntime.playing(ECHO),
                b -> b.suggestions(request -> Suggestions.of(List.of("next"))));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = send(engine, threadId, "hello");
        awaitSuggestions(ticket.assistantMessageId());
        assertCode(ErrorCode.NOT_FOUND, () -> engine.suggestions(MALLORY, ticket.assistantMessageId(), Duration.ZERO));
        assertCode(ErrorCode.NOT_FOUND, () -> engine.suggestions(ALICE, "no-such-message", Duration.ZERO));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.suggestions(ALICE, ticket.userMessageId(), Duration.ZERO));
        assertCode(ErrorCode.INVALID_INPUT,
                () -> engine.suggestions(ALICE, ticket.assistantMessageId(), Duration.ofSeconds(61)));

        engine.deleteThread(ALICE, threadId);
        assertThat(store.findMessage(ticket.assistantMessageId())).as("deleted with the thread").isEmpty();
        assertCode(ErrorCode.NOT_FOUND, () -> engine.suggestions(ALICE, ticket.assistantMessageId(), Duration.ZERO));
    }

    @Test
    void aFailedRunGetsNoSuggestions() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        ChatEngine engine = engine(ScriptedRuntime.playing((request, p) -> {
            throw new IllegalStateException("boom");
        }), b -> b.suggestions(request -> {
            calls.incrementAndGet();
            return Suggestions.of(List.of("next"));
        }));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("hello"));
        awaitRun(engine, ticket.runId(), RunStatus.FAILED);
        assertThat(engine.suggestions(ALICE, ticket.assistantMessageId(), Duration.ofSeconds(5)).get(1, TimeUnit.SECONDS)
                .pending()).isFalse();
        assertThat(calls).hasValue(0);
    }

    @Test
    void aScriptedModelMakesSuggestionsInASeparateCallWithItsOwnModelAndUsage() throws Exception {
        ScriptedModel agent = ScriptedModel.replying(ScriptedModel.Reply.reply().text("Lisbon is lovely.").usage(10, 5));
        ScriptedModel cheap = ScriptedModel.replying(ScriptedModel.Reply.reply()
                .text("1. What about Porto?\n- \"Best time to go?\"\n\nHotels near the river").usage(30, 12));
        ChatEngine.Builder builder = ChatEngine.builder().store(store)
                .runtime(AgentLoopRuntime.builder(agent).build())
                .suggestions(ModelSuggestions.builder(cheap).modelId("tiny").build());
        ChatEngine engine = builder.build();
        try {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            RunTicket ticket = send(engine, threadId, "Where should I travel?");
            AssistantMessage answer = awaitSuggestions(ticket.assistantMessageId());
            assertThat(answer.suggestions().prompts())
                    .containsExactly("What about Porto?", "Best time to go?", "Hotels near the river");
            assertThat(answer.suggestions().usage()).isEqualTo(new TokenUsage(30, 12, 42));
            assertThat(answer.usage()).as("the answer's own usage is the run's").isEqualTo(new TokenUsage(10, 5, 15));
            assertThat(agent.requests()).hasSize(1);
            assertThat(cheap.requests()).singleElement().satisfies(r -> {
                assertThat(r.modelId()).isEqualTo("tiny");
                assertThat(r.tools()).isEmpty();
                assertThat(r.systemPrompt()).contains("up to 3");
                assertThat(r.messages().toString()).contains("Where should I travel?", "Lisbon is lovely.");
            });
        } finally {
            engine.close();
        }
    }

    @Test
    void aFailingModelLeavesTheAnswerWithoutSuggestions() throws Exception {
        ScriptedModel agent = ScriptedModel.replying(ScriptedModel.Reply.reply().text("Fine."));
        ScriptedModel cheap = ScriptedModel.replying(ScriptedModel.Reply.reply()
                .fail(dev.parley.chat.agent.ModelFailure.Kind.RATE_LIMITED, "slow down"));
        ChatEngine engine = ChatEngine.builder().store(store).runtime(AgentLoopRuntime.builder(agent).build())
                .suggestions(ModelSuggestions.builder(cheap).build()).build();
        try {
            String threadId = engine.createThread(ALICE, NewThread.empty()).id();
            RunTicket ticket = send(engine, threadId, "hi");
            AnswerSuggestions found = engine.suggestions(ALICE, ticket.assistantMessageId(), Duration.ofSeconds(10))
                    .get(15, TimeUnit.SECONDS);
            assertThat(found.prompts()).isEmpty();
            assertThat(found.pending()).isFalse();
            assertThat(cheap.requests()).hasSize(1);
            assertThat(engine.state(ALICE, ticket.runId()).run().status()).isEqualTo(RunStatus.SUCCEEDED);
        } finally {
            engine.close();
        }
    }
}
