package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@link EngineLimits#eventFlushInterval()} and {@link EngineLimits#eventFlushBatchSize()}: the batch writer
 * stores a running run's new events every interval, or sooner once the batch size waits; its end is stored
 * before anyone sees it, whatever the interval.
 */
class EventFlushTest extends EngineTestSupport {

    private ChatEngine engineFlushing(ScriptedRuntime.Script script, Duration interval, int batchSize) {
        return engine(ScriptedRuntime.playing(script),
                b -> b.limits(EngineLimits.defaults().withCancelGracePeriod(Duration.ofMillis(300))
                        .withEventFlush(interval, batchSize)));
    }

    private boolean textDeltaStored(RunTicket ticket) {
        return store.readEvents(ticket.runId(), 0, 1_000).stream()
                .anyMatch(e -> e.event() instanceof AgentStreamEvent.TextDelta);
    }

    @Test
    void aRunningRunsEventsAreStoredEveryInterval() {
        ChatEngine engine = engineFlushing(Scripts.streamsUntilCancelled(), Duration.ofMillis(50), 100_000);
        String thread = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("go"));

        await(() -> textDeltaStored(ticket), stored -> stored, "the running run's text delta to be stored");

        assertThat(engine.state(ALICE, ticket.runId()).run().status()).isEqualTo(RunStatus.RUNNING);
    }

    @Test
    void withALongIntervalAFewEventsWaitForTheRunsEnd() throws Exception {
        ChatEngine engine = engineFlushing(Scripts.streamsUntilCancelled(), Duration.ofHours(1), 100_000);
        String thread = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("go"));
        awaitRun(engine, ticket.runId(), RunStatus.RUNNING);
        Thread.sleep(300);

        assertThat(textDeltaStored(ticket)).as("a text delta stored while the run goes on").isFalse();
        engine.cancel(ALICE, ticket.runId());
        awaitRun(engine, ticket.runId(), RunStatus.CANCELLED);
        assertThat(textDeltaStored(ticket)).as("stored with the run's end").isTrue();
    }

    @Test
    void withALongIntervalEventsAreStoredOnceTheBatchSizeWaits() {
        ChatEngine engine = engineFlushing(Scripts.slow(400, 5), Duration.ofHours(1), 20);
        String thread = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("go"));

        long stored = await(() -> store.lastSeq(ticket.runId()), seq -> seq >= 20, "20 events to be stored");

        assertThat(engine.state(ALICE, ticket.runId()).run().status()).as("stored while the run goes on, at seq %d",
                stored).isEqualTo(RunStatus.RUNNING);
        awaitRun(engine, ticket.runId(), RunStatus.SUCCEEDED);
    }
}
