package dev.parley.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.simulator.BridgeSimulator;
import dev.parley.simulator.SimulatorConfig;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The example host app, a child JVM, killed with SIGKILL at a random moment while its runs stream, wait
 * for a clarify answer or an approval, and flush a fast run's events; then started again on the same
 * database. After each restart every run must be terminal or re-attached — a run that was streaming is
 * followed to its end —, no seq a client held may be reused, the replay from seq 0 must be complete, ordered
 * and fold into the stored messages, a succeeded run's deltas must be exactly its answer (no gap, no repeat
 * across the kill), every pending input must be answerable (and answered) or cleanly resolved, and every
 * thread must take a new message. The Bridge simulator runs in this JVM, so runs outlive the host as they
 * would in Hermes.
 */
class ProcessDeathChaosTest {
    /** What a cycle starts, each on a session of its own: streaming, waiting twice, flushing fast, quick. */
    private static final List<String> MESSAGES = List.of("slow please", "slow again, please", "clarify this",
            "approve the cleanup", "long 120000", "use the tools");

    private static BridgeSimulator simulator;

    @BeforeAll
    static void startTheBridge() throws Exception {
        simulator = BridgeSimulator.start(SimulatorConfig.builder().port(0).eventsPerSecond(0)
                .slowEventsPerSecond(40).heartbeatInterval(Duration.ofSeconds(2)).approvalTimeout(Duration.ZERO)
                .retainedRuns(512).retainedFrames(6_000_000).build());
    }

    @AfterAll
    static void stopTheBridge() {
        if (simulator != null) {
            simulator.close();
        }
    }

    @Test
    void onSqlite() throws Exception {
        Path file = Paths.get("target", "chaos-process-death-" + UUID.randomUUID() + ".db").toAbsolutePath();
        Files.createDirectories(file.getParent());
        play("process-death-sqlite", "jdbc:sqlite:" + file, Chaos.seed(1701));
    }

    @Test
    void onPostgres() throws Exception {
        try (EmbeddedPostgres postgres = EmbeddedPostgres.builder().setServerConfig("max_connections", "100").start()) {
            play("process-death-postgres", postgres.getJdbcUrl("postgres", "postgres"), Chaos.seed(1702));
        }
    }

    private void play(String name, String jdbcUrl, long seed) throws Exception {
        Random random = new Random(seed);
        int cycles = Chaos.size(3, 12);
        DeathChecks checks = new DeathChecks();
        List<Long> startMillis = new ArrayList<>();
        List<Long> resolveMillis = new ArrayList<>();
        List<TrackedRun> verified = new ArrayList<>();
        try (ChildApp app = new ChildApp(name, List.of("--spring.datasource.url=" + jdbcUrl,
                "--parley.hermes.base-url=" + simulator.baseUrl(), "--parley.hermes.idle-timeout=30s"))) {
            startMillis.add(app.start().toMillis());
            Rest rest = new Rest(app.baseUrl());
            for (int cycle = 0; cycle < cycles; cycle++) {
                List<TrackedRun> runs = new ArrayList<>();
                for (String message : MESSAGES) {
                    runs.add(TrackedRun.start(rest, message));
                }
                long delay = 300 + random.nextInt(2_700);
                if (random.nextBoolean()) {
                    Rest.sleep(Math.max(0, delay - 150));
                    answerWhatWaits(rest, runs.get(2), checks);
                    Rest.sleep(150);
                } else {
                    Rest.sleep(delay);
                }
                app.kill();
                checks.kills++;
                runs.forEach(TrackedRun::stopReading);
                runs.forEach(run -> checks.moment(run.momentAtKill()));

                startMillis.add(app.start().toMillis());
                long resolving = System.nanoTime();
                for (TrackedRun run : runs) {
                    checks.resolve(rest, run);
                }
                resolveMillis.add((System.nanoTime() - resolving) / 1_000_000);
                for (TrackedRun run : runs) {
                    checks.verifyReplay(rest, run);
                    checks.newMessageIsTaken(rest, run.sessionId());
                }
                for (TrackedRun earlier : verified) {
                    checks.unchangedSince(rest, earlier);
                }
                verified.addAll(runs);
            }
        }
        new Chaos.Figures(name, seed)
                .put("runs", checks.runs).put("kills", checks.kills)
                .put("killedStreaming", checks.streaming).put("killedWaiting", checks.waiting)
                .put("killedFlushing", checks.flushing).put("endedBeforeKill", checks.ended)
                .put("reattached", checks.reattached).put("followedStreaming", checks.followed)
                .put("interrupted", checks.interrupted).put("streamingInterrupted", checks.streamingInterrupted)
                .put("textGapsOrRepeats", checks.textGapsOrRepeats)
                .put("inputsAnswered", checks.answered).put("inputsResolvedClean", checks.resolvedClean)
                .put("eventsChecked", checks.eventsChecked).put("lost", checks.lost).put("duplicated", checks.duplicated)
                .put("seqReused", checks.reused).put("unflushedAtKill", checks.unflushed)
                .put("threadsTakingNewMessage", checks.newMessages)
                .put("restartMillisMax", startMillis.stream().skip(1).mapToLong(Long::longValue).max().orElse(0))
                .put("resolveMillisMax", resolveMillis.stream().mapToLong(Long::longValue).max().orElse(0))
                .report();
        assertThat(checks.lost).as("events lost from a stored prefix").isZero();
        assertThat(checks.duplicated).as("events replayed twice").isZero();
        assertThat(checks.reused).as("seqs a client held, reused for another event").isZero();
        assertThat(checks.streamingInterrupted).as("runs streaming at the kill that were not followed").isZero();
        assertThat(checks.textGapsOrRepeats).as("succeeded runs whose deltas are not their answer").isZero();
        assertThat(checks.newMessages).isEqualTo(checks.runs);
        assertThat(checks.kills).isEqualTo(cycles);
    }

    /** Answers the run's pending input just before the kill: the answer is in flight when the host dies. */
    private static void answerWhatWaits(Rest rest, TrackedRun run, DeathChecks checks) {
        Rest.Answer state = rest.get("/api/chat/runs/" + run.runId() + "/state");
        if (!state.ok()) {
            return;
        }
        for (JsonNode input : state.json().get("pendingInputs")) {
            checks.answerBeforeKill(rest, run, input);
        }
    }
}
