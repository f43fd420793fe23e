package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.testing.FailingStore;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;

/** {@link EngineListener#storeWriteStarted}: each write of a run is announced and its end told. */
class StoreWriteListenerTest extends EngineTestSupport {
    private record Seen(StoreWrite write, @Nullable Throwable failure) {
    }

    private final List<Seen> ended = new CopyOnWriteArrayList<>();
    private final EngineListener recorder = new EngineListener() {
        @Override
        public WriteEnd storeWriteStarted(StoreWrite write) {
            return failure -> ended.add(new Seen(write, failure));
        }
    };

    @Test
    void aRunsFirstWriteAndItsFlushesAreAnnouncedWithWhatTheyStore() {
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.answer("Hello there.")), b -> b.listener(recorder));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();

        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("hi"));
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);

        List<Seen> ofRun = ended.stream().filter(s -> s.write().runIds().contains(ticket.runId())).toList();
        assertThat(ofRun).isNotEmpty().allSatisfy(s -> assertThat(s.failure()).isNull());
        assertThat(ofRun.get(0).write().messages()).isEqualTo(2);
        assertThat(ofRun.stream().mapToInt(s -> s.write().events()).sum()).isGreaterThanOrEqualTo(3);
    }

    @Test
    void aFailedWriteIsToldWithWhatItThrew() {
        FailingStore failing = new FailingStore(store);
        store = failing.store();
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.answer("hi")), b -> b.listener(recorder));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();
        failing.fail("write");

        assertThatThrownBy(() -> engine.startRun(ALICE, threadId, StartRun.of("hi"))).isInstanceOf(ChatException.class);
        failing.heal("write");

        assertThat(ended).isNotEmpty().last().satisfies(s -> assertThat(s.failure()).isNotNull());
    }

    @Test
    void aListenerThatThrowsFromItChangesNothingForTheRun() {
        EngineListener throwing = new EngineListener() {
            @Override
            public WriteEnd storeWriteStarted(StoreWrite write) {
                return failure -> {
                    throw new IllegalStateException("broken");
                };
            }
        };
        ChatEngine engine = engine(ScriptedRuntime.playing(Scripts.answer("hi")), b -> b.listener(throwing));
        String threadId = engine.createThread(ALICE, NewThread.empty()).id();

        RunTicket ticket = engine.startRun(ALICE, threadId, StartRun.of("hi"));

        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
    }
}
