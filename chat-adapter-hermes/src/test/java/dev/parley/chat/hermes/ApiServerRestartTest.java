package dev.parley.chat.hermes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.EngineLimits;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.RunTicket;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.testing.FailingStore;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Hermes' API server cannot replay a run's events, so a host that stops cannot follow a run again: it stops
 * the run on the server before it ends it INTERRUPTED, so that Hermes does not finish (and keep in its
 * session) a turn Parley shows cut off. The server's run id, which a new adapter does not know, comes from
 * the resume point the run's stream reported and the store kept.
 */
class ApiServerRestartTest extends ApiServerTestSupport {

    private StubRun streamingRun(HermesApiStub hermes) {
        return await(() -> hermes.runs().isEmpty() ? null : hermes.runs().get(0),
                run -> run != null && run.statusJson().contains("\"running\""), "the run to stream on Hermes");
    }

    private static String stopOf(StubRun run) {
        return "POST /v1/runs/" + run.id + "/stop";
    }

    @ParameterizedTest
    @EnumSource(value = HermesApiStub.Line.class, names = {"V0_19", "NEWER"})
    void aClosingHostStopsItsStreamingRunOnTheServerAndEndsItInterrupted(HermesApiStub.Line line) {
        HermesApiStub hermes = stub(line);
        hermes.eventPause = Duration.ofMillis(400);
        ChatEngine engine = engine(apiAdapter(hermes));
        String thread = engine.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = engine.startRun(ALICE, thread, StartRun.of("look at the files"));
        StubRun remote = streamingRun(hermes);
        await(() -> store.findResumePoint(ticket.runId()), Optional::isPresent,
                "the server's answer to the start, with the run's id (before it, the run has no name to stop it by)");

        engine.close();

        assertThat(hermes.count(stopOf(remote))).isEqualTo(1);
        assertThat(store.findRun(ticket.runId()).orElseThrow().status()).isEqualTo(RunStatus.INTERRUPTED);
        List<RunEvent> log = store.readEvents(ticket.runId(), 0, 1_000);
        assertThat(log.get(log.size() - 1).event()).as("Hermes' own report of the stop is not logged").isEqualTo(
                new AgentStreamEvent.RunFinished(RunStatus.INTERRUPTED, "the host shut down while the run was active"));
        await(remote::statusJson, s -> s.contains("\"cancelled\""), "Hermes to end the run");
    }

    /**
     * The host dies (its store cut off) while the run streams; the next one, with a new adapter that never
     * saw the run, finds it RUNNING and stops it on the server by the run id the store kept.
     */
    @ParameterizedTest
    @EnumSource(value = HermesApiStub.Line.class, names = {"V0_19", "NEWER"})
    void theNextHostStopsARunItsDeadPredecessorLeftStreamingOnTheServer(HermesApiStub.Line line) {
        HermesApiStub hermes = stub(line);
        hermes.eventPause = Duration.ofMillis(400);
        FailingStore storeOfFirst = new FailingStore(store);
        ChatEngine first = ChatEngine.builder().runtime(apiAdapter(hermes)).store(storeOfFirst.store())
                .limits(EngineLimits.defaults().withCancelGracePeriod(Duration.ofSeconds(3))).build();
        String thread = first.createThread(ALICE, NewThread.empty()).id();
        RunTicket ticket = first.startRun(ALICE, thread, StartRun.of("look at the files"));
        StubRun remote = streamingRun(hermes);
        StoreBatch.ResumePoint point = await(() -> store.findResumePoint(ticket.runId()).orElse(null),
                p -> p != null, "the run's resume point to be stored");
        assertThat(point.token()).as("the server's run id").isEqualTo(remote.id);
        storeOfFirst.kill();

        ChatEngine next = engine(apiAdapter(hermes));

        awaitRun(next, ticket.runId(), RunStatus.INTERRUPTED);
        assertThat(hermes.count(stopOf(remote))).isEqualTo(1);
        await(remote::statusJson, s -> s.contains("\"cancelled\""), "Hermes to end the run");
        first.close();
    }
}
