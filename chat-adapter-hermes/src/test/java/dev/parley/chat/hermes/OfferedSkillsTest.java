package dev.parley.chat.hermes;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.engine.ChatEngine;
import dev.parley.chat.engine.NewThread;
import dev.parley.chat.engine.StartRun;
import dev.parley.chat.model.RunStatus;
import dev.parley.chat.runtime.SkillResolver;
import dev.parley.chat.store.InMemoryChatStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The engine over the Hermes adapter refuses a skill its resolver does not list before it stores anything,
 * also when no skills are configured at all (the resolver then lists none and takes none).
 */
class OfferedSkillsTest extends AdapterTestSupport {
    private final InMemoryChatStore store = new InMemoryChatStore();
    private ChatEngine engine;

    @AfterEach
    void closeEngine() {
        if (engine != null) {
            engine.close();
        }
    }

    @Test
    void withNoSkillsConfiguredEverySkillIsRefusedAndNothingIsStored() {
        engine = ChatEngine.builder().runtime(adapter()).store(store).build();
        String thread = engine.createThread("alice", NewThread.empty()).id();

        assertInvalid(() -> engine.startRun("alice", thread, new StartRun("hi", null, "../../etc/passwd", null, Map.of())));
        assertInvalid(() -> engine.createThread("alice", new NewThread(null, null, "writer")));

        assertThat(store.listTopLevelMessages(thread, null, 10)).isEmpty();
        assertThat(store.findThreadRuns(thread, EnumSet.allOf(RunStatus.class))).isEmpty();
        assertThat(engine.listThreads("alice")).hasSize(1);
    }

    @Test
    void aSkillsDirectoryOffersExactlyItsSkills(@TempDir Path skills) throws Exception {
        Files.createDirectories(skills.resolve("writer"));
        Files.writeString(skills.resolve("writer/SKILL.md"), "# Writer\nBe brief.");
        engine = ChatEngine.builder().runtime(adapter(b -> b.skillResolver(SkillResolver.directory(skills))))
                .store(store).build();

        assertThat(engine.createThread("alice", new NewThread(null, null, "writer")).skill()).isEqualTo("writer");
        assertInvalid(() -> engine.createThread("alice", new NewThread(null, null, "reviewer")));
        assertThat(engine.listThreads("alice")).hasSize(1);
    }

    private static void assertInvalid(org.assertj.core.api.ThrowableAssert.ThrowingCallable call) {
        assertThatThrownBy(call).isInstanceOfSatisfying(ChatException.class,
                e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT));
    }
}
