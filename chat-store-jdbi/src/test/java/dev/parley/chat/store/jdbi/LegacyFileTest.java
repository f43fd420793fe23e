package dev.parley.chat.store.jdbi;

import static org.assertj.core.api.Assertions.assertThat;

import dev.parley.chat.engine.AnswerResult;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.input.ClarifyAnswer;
import dev.parley.chat.input.ClarifyRequest;
import dev.parley.chat.input.InputKind;
import dev.parley.chat.input.InputState;
import dev.parley.chat.input.PendingInput;
import dev.parley.chat.model.AssistantMessage;
import dev.parley.chat.model.Run;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.testing.Await;
import dev.parley.chat.testing.ScriptedRuntime;
import dev.parley.chat.testing.Scripts;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A SQLite file written by an earlier version opens, migrates, and keeps working: here Parley 0.1's file
 * with a run waiting for a clarify answer (see {@code src/test/resources/legacy/README.md}).
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
                assertThat(engine.state("alice", RUN).pendingClarifies()).extracting(c -> c.question())
                        .containsExactly("Which city?");

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
}
