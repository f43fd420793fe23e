package dev.parley.chat.agent;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.engine.HostAction;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.runtime.HostToolSpec;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.UnaryOperator;

/**
 * The whole engine over an {@link AgentLoopRuntime}, for the agent loop's tests: one host action,
 * {@code lookup_order}, that records its arguments and answers {@code "order <arguments>: shipped"}.
 */
abstract class AgentLoopFixture {
    static final String ALICE = "alice";
    static final HostToolSpec LOOKUP = new HostToolSpec("lookup_order", "Finds an order",
            "{\"type\":\"object\",\"properties\":{\"id\":{\"type\":\"integer\"}}}");

    final InMemoryChatStore store = new InMemoryChatStore();
    final List<String> lookups = new CopyOnWriteArrayList<>();

    ChatEngine engine(ModelClient model, UnaryOperator<AgentLoopRuntime.Builder> runtime) {
        return ChatEngine.builder().store(store)
                .runtime(runtime.apply(AgentLoopRuntime.builder(model).maxIterations(5)).build())
                .limits(EngineLimits.defaults().withCancelGracePeriod(Duration.ofMillis(500)))
                .hostAction(new HostAction(LOOKUP, call -> {
                    lookups.add(call.arguments());
                    return "order " + call.arguments() + ": shipped";
                }))
                .build();
    }

    /** Starts a run in a new thread and waits for its end. */
    Run runToEnd(ChatEngine engine, NewThread thread, String text) {
        String threadId = engine.createThread(ALICE, thread).id();
        String runId = engine.startRun(ALICE, threadId, StartRun.of(text)).runId();
        return Await.until(() -> engine.state(ALICE, runId).run(), r -> r.status().isTerminal(), "the run to end");
    }

    String answer(Run run) {
        return answerMessage(run).text();
    }

    AssistantMessage answerMessage(Run run) {
        return (AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow();
    }

    List<Message> steps(Run run) {
        return store.listStepMessagesAfter(run.id(), null, 1_000);
    }
}
