package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.AnswerResult;
import com.fasterxml.jackson.databind.JsonNode;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.event.AgentStreamEvent;
import dev.parley.chat.event.RunEvent;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.json.ChatJson;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.store.StoreBatch;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A SQLite file written by an earlier version opens, migrates, and keeps working: Parley 0.1's file with a
 * run waiting for a clarify answer, and a version 5 file with a finished run's events one per row (see
 * {@code src/test/resources/legacy/README.md}).
 */
class LegacyFileTest {
    private static final String RUN = "08b392c9-88a6-4f47-87ca-aab32548d2db";

    @TempDir
    Path dir;

    private Path copyOf(String resource) throws Exception {
        Path file = dir.resolve("parley.sqlite");
        try (InputStream in = LegacyFileTest.class.getResourceAsStream("/legacy/" + resource)) {
            Files.copy(in, file);
        }
        return file;
    }

    @Test
    void aClarifyThatWaitedInA01FileIsStillAnswerableAfterTheUpgrade() throws Exception {
        try (JdbiChatStore store = JdbiChatStore.sqlite(copyOf("parley-0.1-waiting-clarify.sqlite")).build()) {
            PendingInput migrated = store.findInput(RUN, "ask-1").orElseThrow();
            assertThat(migrated.kind()).isEqualTo(InputKind.CLARIFY);
            assertThat(migrated.state()).isEqualTo(InputState.PENDING);
            assertThat(migrated.request()).isEqualTo(new ClarifyRequest("Which city?", List.of("Paris", "Rome"), false));
            assertThat(migrated.resumeToken()).isEqualTo("resume-at-1");

            ScriptedRuntime runtime = ScriptedRuntime.playing(Scripts.clarify("Which city?", List.of("Paris", "Rome")));
            try (ChatEngine engine = ChatEngine.builder().store(store).runtime(runtime).build()) {
                Await.until(() -> engine.state("alice", RUN).pendingInputs(), pending -> !pending.isEmpty(),
                        "the re-attached run to wait");
                assertThat(runtime.reattachments()).containsExactly(RUN + "@resume-at-1");
                assertThat(engine.state("alice", RUN).pendingInputs())
                        .extracting(input -> ((ClarifyRequest) input.request()).question()).containsExactly("Which city?");

                assertThat(engine.answer("alice", RUN, "ask-1", List.of("Rome"))).isEqualTo(AnswerResult.ACCEPTED);
                Run run = Await.until(() -> engine.state("alice", RUN).run(), r -> r.status() == RunStatus.SUCCEEDED,
                        "the run to end");
                assertThat(((AssistantMessage) store.findMessage(run.assistantMessageId()).orElseThrow()).text())
                        .isEqualTo("You chose Rome.");
                assertThat(store.findInput(RUN, "ask-1").orElseThrow().answer())
                        .isEqualTo(new ClarifyAnswer(List.of("Rome")));
            }
        }
    }

    /**
     * Every event of a run that version 5 stored one per row (thinking and text deltas, a tool call with
     * streamed arguments, a clarify and its answer, the end) reads back exactly after the upgrade to
     * version 6, from every cursor; what is written next to that log is stored compactly and follows on.
     */
    @Test
    void aRunStoredOneEventPerRowByVersion5ReplaysExactlyAfterTheUpgrade() throws Exception {
        ChatJson json = ChatJson.shared();
        List<RunEvent> expected = new ArrayList<>();
        try (InputStream in = LegacyFileTest.class.getResourceAsStream("/legacy/parley-v5-run-events.json")) {
            for (JsonNode node : json.readTree(new String(in.readAllBytes(), StandardCharsets.UTF_8))) {
                expected.add(json.readRunEvent(node.toString()));
            }
        }
        assertThat(expected).hasSize(28);
        String run = expected.get(0).runId();
        Path file = copyOf("parley-v5-run-events.sqlite");
        try (JdbiChatStore store = JdbiChatStore.sqlite(file).build()) {
            for (int cursor = 0; cursor <= expected.size(); cursor++) {
                for (int limit : new int[] {1, 4, 100}) {
                    assertThat(store.readEvents(run, cursor, limit)).as("after %d, up to %d", cursor, limit)
                            .containsExactlyElementsOf(expected.subList(cursor, Math.min(expected.size(), cursor + limit)));
                }
            }
            assertThat(store.lastSeq(run)).isEqualTo(28);

            List<RunEvent> more = new ArrayList<>();
            for (int seq = 29; seq <= 40; seq++) {
                more.add(new RunEvent(run, seq, 1_000 + seq, new AgentStreamEvent.TextDelta("later", "w" + seq)));
            }
            store.write(StoreBatch.builder().events(more).build());
            List<RunEvent> all = new ArrayList<>(expected);
            all.addAll(more);
            assertThat(store.readEvents(run, 0, 100)).containsExactlyElementsOf(all);
            assertThat(store.readEvents(run, 30, 3)).containsExactlyElementsOf(all.subList(30, 33));
        }
        try (Connection c = DriverManager.getConnection("jdbc:sqlite:" + file);
                ResultSet rs = c.createStatement().executeQuery(
                        "SELECT MAX(version), (SELECT COUNT(*) FROM parley_run_events) FROM parley_schema_history")) {
            assertThat(rs.getString(1)).isEqualTo("9");
            assertThat(rs.getInt(2)).as("the 28 old rows as they were, and one row for the new deltas").isEqualTo(29);
        }
    }
}
