package dev.parley.chat.hermes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.InMemoryChatStore;
import dev.parley.chat.testing.Await;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.function.Supplier;
import org.assertj.core.api.ThrowableAssert;
import org.junit.jupiter.api.AfterEach;

/** Stub Hermes API servers per line, adapters on them, and engines over the in-memory store driving those. */
abstract class ApiServerTestSupport extends AdapterTestSupport {
    static final String ALICE = "alice";

    final InMemoryChatStore store = new InMemoryChatStore();
    private final List<HermesApiStub> stubs = new ArrayList<>();
    private final List<ChatEngine> engines = new ArrayList<>();

    @AfterEach
    void closeStubsAndEngines() throws IOException {
        engines.forEach(ChatEngine::close);
        for (HermesApiStub stub : stubs) {
            stub.close();
        }
    }

    HermesApiStub stub(HermesApiStub.Line line) {
        try {
            HermesApiStub stub = new HermesApiStub(line);
            stubs.add(stub);
            return stub;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    HermesRuntimeAdapter apiAdapter(HermesApiStub stub) {
        return apiAdapter(stub, b -> {
        });
    }

    HermesRuntimeAdapter apiAdapter(HermesApiStub stub, Consumer<HermesConfig.Builder> more) {
        return adapter(stub.baseUrl(), b -> {
            b.transport(HermesTransport.API_SERVER).bearerToken(HermesApiStub.KEY);
            more.accept(b);
        });
    }

    ChatEngine engine(HermesRuntimeAdapter adapter) {
        ChatEngine engine = ChatEngine.builder().runtime(adapter).store(store)
                .limits(EngineLimits.defaults().withCancelGracePeriod(Duration.ofSeconds(3))).build();
        engines.add(engine);
        return engine;
    }

    static Run awaitRun(ChatEngine engine, String runId, RunStatus status) {
        return await(() -> engine.state(ALICE, runId).run(), run -> run.status() == status,
                "run " + runId + " to be " + status);
    }

    static <T> T await(Supplier<T> probe, Predicate<T> condition, String what) {
        return Await.until(probe, condition, what);
    }

    /** Waits until the run has {@code count} pending inputs of this kind and returns them, oldest first. */
    static List<PendingInput> awaitPending(ChatEngine engine, String runId, InputKind kind, int count) {
        return await(() -> engine.state(ALICE, runId).pendingInputs().stream().filter(i -> i.kind() == kind).toList(),
                inputs -> inputs.size() == count, count + " pending " + kind);
    }

    /** The run's stored step messages of one type. */
    <M extends Message> List<M> steps(Run run, Class<M> type) {
        return store.listStepMessagesAfter(run.id(), null, 1_000).stream().filter(type::isInstance).map(type::cast).toList();
    }

    static void assertCode(ErrorCode code, ThrowableAssert.ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(code));
    }
}
