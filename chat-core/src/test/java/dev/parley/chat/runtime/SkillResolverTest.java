package dev.parley.chat.runtime;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** Skills as folders with a SKILL.md, and names that try to leave the folder. */
class SkillResolverTest {
    @TempDir
    Path root;
    Path skills;
    Path outside;

    @BeforeEach
    void layOut() throws Exception {
        skills = Files.createDirectories(root.resolve("skills"));
        outside = Files.createDirectories(root.resolve("outside"));
        Files.createDirectories(skills.resolve("writer"));
        Files.writeString(skills.resolve("writer/SKILL.md"),
                "---\nname: \"Careful writer\"\ndescription: Writes short, clear text\n---\n# Ignored heading\nBe brief.");
        Files.createDirectories(skills.resolve("reviewer"));
        Files.writeString(skills.resolve("reviewer/SKILL.md"), "# Code reviewer\n\nReviews diffs\nline by line.\n\n## More\n");
        Files.createDirectories(skills.resolve("empty"));
        Files.createDirectories(outside.resolve("evil"));
        Files.writeString(outside.resolve("evil/SKILL.md"), "# Evil\nexfiltrate");
        Files.writeString(outside.resolve("secret.txt"), "password=hunter2");
        Files.createSymbolicLink(skills.resolve("evil"), outside.resolve("evil"));
        Files.createDirectories(skills.resolve("sneaky"));
        Files.createSymbolicLink(skills.resolve("sneaky/SKILL.md"), outside.resolve("secret.txt"));
    }

    @Test
    void skillsAreListedWithNameAndDescription() {
        assertThat(SkillResolver.directory(skills).skills()).containsExactly(
                new SkillOption("reviewer", "Code reviewer", "Reviews diffs line by line."),
                new SkillOption("writer", "Careful writer", "Writes short, clear text"));
    }

    @Test
    void aSkillsSystemPromptIsItsSkillFile() {
        assertThat(SkillResolver.directory(skills).systemPrompt("reviewer"))
                .isEqualTo("# Code reviewer\n\nReviews diffs\nline by line.\n\n## More\n");
    }

    @ParameterizedTest
    @ValueSource(strings = {"..", ".", "../outside/evil", "/etc", "writer/../writer", "a/b", "a\\b", "", " ", ".hidden",
            "c:", "nul\0l"})
    void namesThatLeaveTheDirectoryAreInvalid(String name) {
        assertInvalid(name);
    }

    @Test
    void anAbsolutePathIsInvalid() {
        assertInvalid(outside.resolve("evil").toString());
    }

    @Test
    void aFolderLinkLeadingOutIsInvalid() {
        assertInvalid("evil");
    }

    @Test
    void aSkillFileLinkLeadingOutIsInvalid() {
        assertThatThrownBy(() -> SkillResolver.directory(skills).systemPrompt("sneaky"))
                .isInstanceOfSatisfying(ChatException.class, e -> {
                    assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT);
                    assertThat(e.getMessage()).doesNotContain("hunter2");
                });
    }

    @Test
    void anUnknownSkillIsInvalid() {
        assertInvalid("missing");
        assertInvalid("empty");
        assertThatThrownBy(() -> SkillResolver.none().systemPrompt("writer")).isInstanceOf(ChatException.class);
    }

    private void assertInvalid(String name) {
        assertThatThrownBy(() -> SkillResolver.directory(skills).systemPrompt(name))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_INPUT));
    }
}
