package dev.parley.chat.engine;

import static dev.parley.chat.testing.ScriptedModel.Reply.reply;
import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.agent.AgentLoopRuntime;
import dev.parley.chat.agent.ModelMessage;
import dev.parley.chat.input.ClientToolAnswer;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.Capability;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.ScriptedModel;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.util.EnumSet;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/** Host actions decided per run by a {@link HostActionSource}, through the whole engine and the agent loop. */
class HostActionSourceTest {
    private static final HostToolSpec LOOKUP = new HostToolSpec("lookup_order", "Finds an order", "{\"type\":\"object\"}");
    private static final HostToolSpec WEATHER = new HostToolSpec("weather", "Tells the weather", "{\"type\":\"object\"}");

    private final InMemoryChatStore store = new InMemoryChatStore();
    private final List<String> calls = new CopyOnWriteArrayList<>();
    private final List<HostActionScope> asked = new CopyOnWriteArrayList<>();

    private ChatEngine engine(ScriptedModel model, Consumer<ChatEngine.Builder> config) {
        ChatEngine.Builder builder = ChatEngine.builder().store(store)
                .runtime(AgentLoopRuntime.builder(model).maxIterations(4).build())
                .hostAction(new HostAction(LOOKUP, call -> {
                    calls.add("fixed lookup " + call.arguments());
                    return "shipped";
                }));
        config.accept(builder);
        return builder.build();
    }

    /** Alice's runs get the weather tool, nobody else's; every ask is recorded. */
    private HostActionSource weatherForAlice() {
        return scope -> {
            asked.add(scope);
            return !scope.ownerId().equals("alice") ? List.of() : List.of(new HostAction(WEATHER, call -> {
                calls.add(call.ownerId() + " weather " + call.arguments());
                return "sunny";
            }));
        };
    }

    private Run runToEnd(ChatEngine engine, String owner, String text) {
        String threadId = engine.createThread(owner, NewThread.empty()).id();
        String runId = engine.startRun(owner, threadId, StartRun.of(text)).runId();
        return Await.until(() -> engine.state(owner, runId).run(), r -> r.status().isTerminal(), "the run to end");
    }

    private static List<String> offered(ScriptedModel model, int request) {
        return model.requests().get(request).tools().stream().map(HostToolSpec::name).toList();
    }

    @Test
    void aSourceDecidesPerOwnerAndIsAskedOncePerRunThoughTheModelIsCalledTwice() {
        ScriptedModel model = ScriptedModel.choosing(request -> request.messages().size() == 1
                ? reply().completeToolCall("c1", "weather", "{\"city\":\"Rome\"}")
                : reply().text("Sunny."));
        try (ChatEngine engine = engine(model, b -> b.hostActions(weatherForAlice()))) {
            Run alices = runToEnd(engine, "alice", "weather?");
            assertThat(alices.status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(calls).containsExactly("alice weather {\"city\":\"Rome\"}");
            assertThat(offered(model, 0)).containsExactlyInAnyOrder("lookup_order", "weather");
            assertThat(asked).containsExactly(new HostActionScope("alice", alices.threadId(), alices.id()));

            Run bobs = runToEnd(engine, "bob", "weather?");
            assertThat(offered(model, 2)).as("bob is not offered alice's tool").containsExactly("lookup_order");
            assertThat(calls).as("bob's call of a tool he was not offered does not run").hasSize(1);
            assertThat(((ModelMessage.ToolResult) model.requests().get(3).messages().get(2)).error()).isTrue();
            assertThat(bobs.status()).isEqualTo(RunStatus.SUCCEEDED);
        }
    }

    @Test
    void onANameOfferedTwiceTheFixedActionThenTheEarlierSourceWins() {
        ScriptedModel model = ScriptedModel.choosing(request -> request.messages().size() == 1
                ? reply().completeToolCall("c1", "lookup_order", "{}").completeToolCall("c2", "weather", "{}")
                : reply().text("Done."));
        HostActionSource shadowing = scope -> List.of(
                new HostAction(LOOKUP, call -> {
                    calls.add("shadowing lookup");
                    return "never";
                }),
                new HostAction(WEATHER, call -> {
                    calls.add("second weather");
                    return "rain";
                }));
        try (ChatEngine engine = engine(model, b -> b.hostActions(weatherForAlice()).hostActions(shadowing))) {
            assertThat(runToEnd(engine, "alice", "both").status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(calls).containsExactlyInAnyOrder("fixed lookup {}", "alice weather {}");
            assertThat(offered(model, 0)).hasSize(2);
        }
    }

    @Test
    void aSourcesActionNamedLikeAToolThePageOffersIsLeftOutThePageRunsIt() {
        ScriptedModel model = ScriptedModel.choosing(request -> request.messages().size() == 1
                ? reply().completeToolCall("c1", "weather", "{}")
                : reply().text("Asked the page."));
        try (ChatEngine engine = engine(model, b -> b.hostActions(weatherForAlice()))) {
            String threadId = engine.createThread("alice", NewThread.empty()).id();
            String runId = engine.startRun("alice", threadId, StartRun.of("weather?").withClientTools(List.of(WEATHER)))
                    .runId();
            PendingInput asked = Await.until(() -> engine.state("alice", runId).pendingInputs(), p -> !p.isEmpty(),
                    "the page's tool").get(0);
            assertThat(asked.kind()).isEqualTo(InputKind.CLIENT_TOOL);
            engine.answer("alice", runId, asked.inputId(), new ClientToolAnswer("cloudy", false));
            Await.until(() -> engine.state("alice", runId).run().status(), s -> s == RunStatus.SUCCEEDED, "the end");
            assertThat(calls).as("the source's weather never ran").isEmpty();
            assertThat(offered(model, 0)).containsExactlyInAnyOrder("lookup_order", "weather");
        }
    }

    @Test
    void aRuntimeThatCannotCallHostToolsIsOfferedNoneAndNoSourceIsAsked() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.instant("plain"))
                .withCapabilities(EnumSet.of(Capability.CANCEL));
        try (ChatEngine engine = ChatEngine.builder().store(store).runtime(runtime).hostActions(weatherForAlice())
                .build()) {
            assertThat(runToEnd(engine, "alice", "hi").status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(runtime.requests()).singleElement().satisfies(r -> assertThat(r.hostTools()).isEmpty());
            assertThat(asked).isEmpty();
        }
    }

    @Test
    void aFailingSourceOffersNothingAndTheRunGoesOnWithTheRest() {
        ScriptedModel model = ScriptedModel.choosing(request -> request.messages().size() == 1
                ? reply().completeToolCall("c1", "lookup_order", "{}")
                : reply().text("Shipped."));
        HostActionSource broken = scope -> {
            throw new IllegalStateException("registry down");
        };
        try (ChatEngine engine = engine(model, b -> b.hostActions(broken).hostActions(weatherForAlice()))) {
            assertThat(runToEnd(engine, "alice", "where is it?").status()).isEqualTo(RunStatus.SUCCEEDED);
            assertThat(offered(model, 0)).containsExactlyInAnyOrder("lookup_order", "weather");
            assertThat(calls).containsExactly("fixed lookup {}");
        }
    }
}
