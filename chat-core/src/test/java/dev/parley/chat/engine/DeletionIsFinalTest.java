package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.model.Message;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.ChatStore;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.testing.InterceptedStore;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

/**
 * Deleting a thread (or erasing its owner) is final: a message sent while the thread is being deleted starts
 * no run, and no run writes anything of the thread afterwards — no run row, no message, no event.
 */
class DeletionIsFinalTest extends EngineTestSupport {
    /** Every run and message id any write stored, to look for afterwards. */
    private final Set<String> runIds = ConcurrentHashMap.newKeySet();
    private final Set<String> messageIds = ConcurrentHashMap.newKeySet();

    /**
     * The store under test, recording every id written; {@code whileDeleting} runs when the engine deletes a
     * thread in the store, just before the delete.
     */
    private void recordWrites(Consumer<String> whileDeleting) {
        ChatStore real = store;
        store = InterceptedStore.of(real, (method, args, proceed) -> {
            if (method.equals("write")) {
                StoreBatch batch = (StoreBatch) args[0];
                batch.runs().forEach(run -> runIds.add(run.id()));
                batch.messages().forEach(message -> messageIds.add(message.id()));
            } else if (method.equals("deleteThread")) {
                whileDeleting.accept((String) args[0]);
            }
            return proceed.call();
        });
    }

    private void assertNothingLeftOf(String threadId) {
        try {
            Thread.sleep(300);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        assertThat(store.findThread(threadId)).isEmpty();
        assertThat(store.findThreadRuns(threadId, EnumSet.allOf(RunStatus.class))).isEmpty();
        assertThat(runIds).isNotEmpty();
        for (String runId : runIds) {
            assertThat(store.findRun(runId)).as("run " + runId).isEmpty();
            assertThat(store.readEvents(runId, 0, 100)).as("events of run " + runId).isEmpty();
        }
        assertThat(store.findMessages(messageIds)).extracting(Message::id).as("messages").isEmpty();
    }

    @Test
    void aMessageSentWhileItsOwnerIsErasedStartsNoRunAndLeavesNoRow() {
        AtomicReference<ChatEngine> engine = new AtomicReference<>();
        AtomicReference<Object> lateSend = new AtomicReference<>();
        recordWrites(threadId -> {
            try {
                lateSend.set(engine.get().startRun(ALICE, threadId, StartRun.of("one more thing")));
            } catch (ChatException e) {
                lateSend.set(e.code());
            }
        });
        engine.set(engine(ScriptedRuntime.playing(Scripts.slow(20, 10))));
        String threadId = engine.get().createThread(ALICE, NewThread.empty()).id();
        RunTicket first = engine.get().startRun(ALICE, threadId, StartRun.of("hello"));

        assertThat(engine.get().eraseOwner(ALICE)).isEqualTo(1);

        assertThat(lateSend.get()).as("the message sent during the erase").isEqualTo(ErrorCode.NOT_FOUND);
        assertThat(runIds).contains(first.runId());
        assertNothingLeftOf(threadId);
        assertThat(engine.get().listThreads(ALICE)).isEmpty();
    }

    @Test
    void aMessageSentWhileItsThreadIsDeletedStartsNoRunAndLeavesNoRow() {
        AtomicReference<ChatEngine> engine = new AtomicReference<>();
        AtomicReference<Object> lateSend = new AtomicReference<>();
        recordWrites(threadId -> {
            try {
                lateSend.set(engine.get().startRun(ALICE, threadId, StartRun.of("one more thing")));
            } catch (ChatException e) {
                lateSend.set(e.code());
            }
        });
        engine.set(engine(ScriptedRuntime.playing(Scripts.instant("ok"))));
        String threadId = engine.get().createThread(ALICE, NewThread.empty()).id();
        RunTicket first = engine.get().startRun(ALICE, threadId, StartRun.of("hello"));
        awaitRun(engine.get(), first.runId(), RunStatus.SUCCEEDED);

        engine.get().deleteThread(ALICE, threadId);

        assertThat(lateSend.get()).as("the message sent during the delete").isEqualTo(ErrorCode.NOT_FOUND);
        assertNothingLeftOf(threadId);
        assertCode(ErrorCode.NOT_FOUND, () -> engine.get().startRun(ALICE, threadId, StartRun.of("after")));
    }

    /**
     * A run that ignores the cancel (its runtime cannot stop) is ended by the engine before its thread is
     * erased, and nothing of it is stored afterwards, though its runtime goes on streaming.
     */
    @Test
    void aRunThatDoesNotStopIsEndedBeforeTheEraseAndWritesNothingAfter() {
        ScriptedRuntime deaf = ScriptedRuntime.playing(Scripts.slow(200, 10))
                .withCapabilities(EnumSet.noneOf(dev.parley.chat.runtime.Capability.class));
        recordWrites(threadId -> {
        });
        ChatEngine engine = engine(deaf);
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket streaming = engine.startRun(ALICE, threadId, StartRun.of("go on and on"));
        await(() -> store.lastSeq(streaming.runId()), seq -> seq > 5, "the run to stream");

        assertThat(engine.eraseOwner(ALICE)).isEqualTo(1);

        assertNothingLeftOf(threadId);
        assertCode(ErrorCode.NOT_FOUND, () -> engine.state(ALICE, streaming.runId()));
    }

    /**
     * A thread id opened again after the thread was deleted (clients such as AG-UI choose their own ids) is a
     * new conversation to the runtime: its runs carry another conversation key, and the runtime was told to
     * forget the old one.
     */
    @Test
    void aReusedThreadIdIsANewConversationToTheRuntime() {
        ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.instant("ok"));
        ChatEngine engine = engine(runtime, b -> b.clock(new dev.parley.chat.testing.SteppingClock(java.time.Instant.now())));
        engine.openThread(ALICE, "chosen-id");
        awaitRun(engine, engine.startRun(ALICE, "chosen-id", StartRun.of("hello")).runId(), RunStatus.SUCCEEDED);
        String oldKey = runtime.requests().get(0).conversationKey();
        assertThat(oldKey).startsWith("chosen-id@");

        engine.eraseOwner(ALICE);
        assertThat(runtime.deletedConversations()).containsExactly(oldKey);

        engine.openThread(MALLORY, "chosen-id");
        RunTicket fresh = engine.startRun(MALLORY, "chosen-id", StartRun.of("hello"));
        await(() -> engine.state(MALLORY, fresh.runId()).run().status(), RunStatus.SUCCEEDED::equals, "the new run");
        assertThat(runtime.requests().get(1).conversationKey()).startsWith("chosen-id@").isNotEqualTo(oldKey);
        engine.deleteThread(MALLORY, "chosen-id");
        assertThat(runtime.deletedConversations()).containsExactly(oldKey, runtime.requests().get(1).conversationKey());
    }
}
