package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.ErrorCode;
import dev.parley.chat.model.ChatThread;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/** Threads named by their client (AG-UI's threadId): created on first use, the owner's only. */
class OpenThreadTest extends EngineTestSupport {

    @Test
    void aThreadIsCreatedUnderTheClientsIdOnFirstUseAndFoundAfterwards() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.answer("hi")));
        ChatThread created = engine.openThread(ALICE, "client-thread-1");
        assertThat(created.id()).isEqualTo("client-thread-1");
        assertThat(created.ownerId()).isEqualTo(ALICE);
        RunTicket run = engine.startRun(ALICE, created.id(), StartRun.of("hello there"));
        awaitRun(engine, run.runId(), RunStatus.SUCCEEDED);

        ChatThread again = engine.openThread(ALICE, "client-thread-1");
        assertThat(again.id()).isEqualTo(created.id());
        assertThat(again.title()).as("the first message titled it").isEqualTo("hello there");
        assertThat(engine.listThreads(ALICE)).extracting(ChatThread::id).containsExactly("client-thread-1");
    }

    @Test
    void anotherOwnersThreadIdIsNotFoundAndStaysTheirs() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.answer("hi")));
        engine.openThread(ALICE, "shared-name");
        assertCode(ErrorCode.NOT_FOUND, () -> engine.openThread(MALLORY, "shared-name"));
        assertThat(engine.listThreads(MALLORY)).isEmpty();
        assertThat(store.findThread("shared-name")).get().extracting(ChatThread::ownerId).isEqualTo(ALICE);
    }

    @Test
    void aBadIdIsInvalidInputAndCreatesNothing() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.answer("hi")));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.openThread(ALICE, " "));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.openThread(ALICE, "x".repeat(201)));
        assertCode(ErrorCode.INVALID_INPUT, () -> engine.openThread(ALICE, "line\nbreak"));
        assertThat(engine.listThreads(ALICE)).isEmpty();
    }

    @Test
    void concurrentFirstUsesCreateOneThread() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.answer("hi")));
        List<CompletableFuture<ChatThread>> opens = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            opens.add(CompletableFuture.supplyAsync(() -> engine.openThread(ALICE, "raced")));
        }
        assertThat(opens).allSatisfy(f -> assertThat(f.join().id()).isEqualTo("raced"));
        assertThat(engine.listThreads(ALICE)).hasSize(1);
    }
}
