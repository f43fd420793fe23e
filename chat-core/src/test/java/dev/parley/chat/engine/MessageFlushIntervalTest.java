package dev.parley.chat.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.MessageStatus;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * {@link EngineLimits#messageFlushInterval()}: a running run's messages are stored every interval (what
 * another instance, a search or an export sees of a run still going), and always at its end; its events
 * are stored on their own rhythm in between.
 */
class MessageFlushIntervalTest extends EngineTestSupport {

    private ChatEngine engineFlushingMessagesEvery(Duration interval) {
        return engine(ScriptedRuntime.playing(Scripts.streamsUntilCancelled()),
                b -> b.limits(EngineLimits.defaults().withCancelGracePeriod(Duration.ofMillis(300))
                        .withMessageFlushInterval(interval)));
    }

    private AssistantMessage storedAnswer(RunTicket ticket) {
        return (AssistantMessage) store.findMessage(ticket.assistantMessageId()).orElseThrow();
    }

    private boolean textDeltaStored(RunTicket ticket) {
        return store.readEvents(ticket.runId(), 0, 100).stream()
                .anyMatch(e -> e.event() instanceof AgentStreamEvent.TextDelta);
    }

    @Test
    void aRunningAnswerIsStoredEveryInterval() {
        ChatEngine engine = engineFlushingMessagesEvery(Duration.ofMillis(100));
        String thread = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("go"));

        AssistantMessage stored = await(() -> storedAnswer(ticket), a -> a.text().equals("Partial answer"),
                "the running answer to be stored");

        assertThat(engine.state(ALICE, ticket.runId()).run().status()).isEqualTo(RunStatus.RUNNING);
        assertThat(stored.status()).isEqualTo(MessageStatus.IN_PROGRESS);
        engine.cancel(ALICE, ticket.runId());
        awaitRun(engine, ticket.runId(), RunStatus.CANCELLED);
        assertThat(storedAnswer(ticket).status()).isEqualTo(MessageStatus.CANCELLED);
    }

    @Test
    void withALongIntervalTheStoredAnswerWaitsForTheRunsEndWhileItsEventsAreStored() throws Exception {
        ChatEngine engine = engineFlushingMessagesEvery(Duration.ofHours(1));
        String thread = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("go"));

        await(() -> textDeltaStored(ticket), stored -> stored, "the answer's text delta to be stored");
        Thread.sleep(300);

        assertThat(storedAnswer(ticket).text()).as("the stored answer while the run goes on").isEmpty();
        engine.cancel(ALICE, ticket.runId());
        awaitRun(engine, ticket.runId(), RunStatus.CANCELLED);
        assertThat(storedAnswer(ticket).text()).as("the stored answer at the run's end").isEqualTo("Partial answer");
        assertThat(storedAnswer(ticket).status()).isEqualTo(MessageStatus.CANCELLED);
    }
}
