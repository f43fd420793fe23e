package dev.parley.chat.runtime;

import dev.parley.chat.ChatException;
import dev.parley.chat.runtime.internal.DirectorySkillResolver;
import java.nio.file.Path;
import java.util.List;

/**
 * Turns a thread's skill into the system prompt a runtime runs with (Hermes, or the agent loop over any
 * model), and lists the skills a person may choose from. Implementations must be thread-safe.
 */
public interface SkillResolver {

    /**
     * The system prompt of this skill.
     *
     * @throws ChatException INVALID_INPUT if the name is not a valid skill name (e.g. it tries to leave the
     *     skills directory) or no such skill exists
     */
    String systemPrompt(String skill);

    /**
     * The skills a person may choose from, sorted by id: every skill {@link #systemPrompt} takes. The engine
     * refuses a run or thread naming any other skill with INVALID_INPUT before it stores anything.
     */
    List<SkillOption> skills();

    /**
     * Skills as folders of {@code directory}: the folder name is the skill id, its {@code SKILL.md} is the
     * system prompt. Name and description come from the file's front matter ({@code name:},
     * {@code description:}), else from its first heading and first paragraph. A skill name must be one
     * plain folder name: no separators, no {@code ..}, not absolute, and neither the folder nor its
     * {@code SKILL.md} may be a link leading out of {@code directory}. Files are read on every call, so
     * edits show up without a restart.
     */
    static SkillResolver directory(Path directory) {
        return new DirectorySkillResolver(directory);
    }

    /** No skills: lists none, and any skill name is INVALID_INPUT. The default. */
    static SkillResolver none() {
        return new SkillResolver() {
            @Override
            public String systemPrompt(String skill) {
                throw ChatException.invalidInput("no skills are configured; unknown skill: " + skill);
            }

            @Override
            public List<SkillOption> skills() {
                return List.of();
            }

            @Override
            public String toString() {
                return "SkillResolver.none";
            }
        };
    }
}
