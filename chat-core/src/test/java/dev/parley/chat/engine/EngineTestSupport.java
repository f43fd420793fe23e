package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.ScriptedRuntime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.api.AfterEach;

/** Engines over the in-memory store, torn down after each test, and waiting helpers. */
abstract class EngineTestSupport {
    protected static final String ALICE = "alice";
    protected static final String MALLORY = "mallory";

    protected ChatStore store = new InMemoryChatStore();
    private final List<ChatEngine> engines = new ArrayList<>();

    protected ChatEngine engine(ScriptedRuntime runtime) {
        return engine(runtime, b -> {
        });
    }

    protected ChatEngine engine(ScriptedRuntime runtime, java.util.function.Consumer<ChatEngine.Builder> config) {
        ChatEngine.Builder builder = ChatEngine.builder().runtime(runtime).store(store)
                .limits(EngineLimits.defaults().withCancelGracePeriod(Duration.ofMillis(300)));
        config.accept(builder);
        ChatEngine engine = builder.build();
        engines.add(engine);
        return engine;
    }

    @AfterEach
    void closeEngines() {
        engines.forEach(ChatEngine::close);
    }

    protected static Run awaitRun(ChatEngine engine, String runId, RunStatus status) {
        return await(() -> engine.state(ALICE, runId).run(), run -> run.status() == status,
                "run " + runId + " to be " + status);
    }

    protected static <T> T await(Supplier<T> probe, java.util.function.Predicate<T> condition, String what) {
        return dev.parley.chat.testing.Await.until(probe, condition, what);
    }

    protected static void assertCode(ErrorCode code, ThrowableAssert.ThrowingCallable call) {
        org.assertj.core.api.Assertions.assertThatThrownBy(call)
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(code));
    }

    /** The run's stored messages: its user message (if any), its answer and the answer's steps. */
    protected List<Message> storedMessagesOf(Run run) {
        List<Message> messages = new ArrayList<>();
        if (run.userMessageId() != null) {
            messages.add(store.findMessage(run.userMessageId()).orElseThrow());
        }
        messages.add(store.findMessage(run.assistantMessageId()).orElseThrow());
        messages.addAll(store.listStepMessagesAfter(run.id(), null, 1_000));
        return messages;
    }
}
