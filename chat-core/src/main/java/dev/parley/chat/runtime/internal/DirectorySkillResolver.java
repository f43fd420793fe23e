package dev.parley.chat.runtime.internal;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.runtime.SkillResolver;
import dev.parley.chat.runtime.SkillOption;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Skills as folders holding a {@code SKILL.md}; see {@link SkillResolver#directory(Path)}. Thread-safe. */
public final class DirectorySkillResolver implements SkillResolver {
    private static final Logger log = LoggerFactory.getLogger(DirectorySkillResolver.class);
    static final String FILE = "SKILL.md";
    /** A system prompt larger than this is refused (a misplaced file, not a skill). */
    static final long MAX_BYTES = 256 * 1024;
    private static final int MAX_NAME = 128;

    private final Path directory;

    public DirectorySkillResolver(Path directory) {
        this.directory = Objects.requireNonNull(directory, "directory").toAbsolutePath().normalize();
    }

    @Override
    public String systemPrompt(String skill) {
        return read(locate(skill)).text();
    }

    @Override
    public List<SkillOption> skills() {
        List<SkillOption> skills = new ArrayList<>();
        if (!Files.isDirectory(directory)) {
            return skills;
        }
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(directory)) {
            for (Path entry : entries) {
                String id = entry.getFileName().toString();
                try {
                    Skill skill = read(locate(id));
                    skills.add(new SkillOption(id, skill.name() != null ? skill.name() : id,
                            skill.description() != null ? skill.description() : ""));
                } catch (ChatException notASkill) {
                    log.debug("Skipping {} in the skills directory: {}", id, notASkill.getMessage());
                }
            }
        } catch (IOException e) {
            throw new ChatException(ErrorCode.INTERNAL, "cannot list the skills directory", e);
        }
        skills.sort(Comparator.comparing(SkillOption::id));
        return skills;
    }

    /** The skill's SKILL.md, checked to be a regular file really inside the directory. */
    private Path locate(String skill) {
        if (skill == null || skill.isBlank() || skill.length() > MAX_NAME || skill.equals(".") || skill.equals("..")
                || skill.contains("/") || skill.contains("\\") || skill.indexOf('\0') >= 0 || skill.contains(":")
                || skill.startsWith(".")) {
            throw ChatException.invalidInput("not a valid skill name: a skill is one folder name inside the skills directory");
        }
        Path candidate = directory.resolve(skill).normalize();
        if (!candidate.getParent().equals(directory)) {
            throw ChatException.invalidInput("not a valid skill name: a skill is one folder name inside the skills directory");
        }
        Path file = candidate.resolve(FILE);
        try {
            Path realRoot = directory.toRealPath();
            Path realFile = file.toRealPath();
            if (!realFile.startsWith(realRoot) || !Files.isRegularFile(realFile)) {
                throw ChatException.invalidInput("skill " + skill + " leads outside the skills directory");
            }
            if (Files.size(realFile) > MAX_BYTES) {
                throw ChatException.invalidInput("skill " + skill + " is larger than " + MAX_BYTES + " bytes");
            }
            return realFile;
        } catch (IOException e) {
            throw ChatException.invalidInput("unknown skill: " + skill);
        }
    }

    private static Skill read(Path file) {
        try {
            return Skill.parse(Files.readString(file, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw ChatException.invalidInput("cannot read skill " + file.getParent().getFileName());
        }
    }

    /** A SKILL.md: its whole text, and the name and description it declares. */
    record Skill(String text, @Nullable String name, @Nullable String description) {
        static Skill parse(String text) {
            String name = null;
            String description = null;
            String body = text;
            String[] lines = text.split("\\R", -1);
            if (lines.length > 0 && lines[0].strip().equals("---")) {
                int end = -1;
                for (int i = 1; i < lines.length; i++) {
                    if (lines[i].strip().equals("---")) {
                        end = i;
                        break;
                    }
                    int colon = lines[i].indexOf(':');
                    if (colon > 0 && !Character.isWhitespace(lines[i].charAt(0))) {
                        String key = lines[i].substring(0, colon).strip();
                        String value = unquote(lines[i].substring(colon + 1).strip());
                        if (key.equals("name") && !value.isEmpty()) {
                            name = value;
                        } else if (key.equals("description") && !value.isEmpty()) {
                            description = value;
                        }
                    }
                }
                if (end > 0) {
                    body = String.join("\n", java.util.Arrays.asList(lines).subList(end + 1, lines.length));
                }
            }
            if (name == null || description == null) {
                String heading = null;
                StringBuilder paragraph = new StringBuilder();
                for (String line : body.split("\\R")) {
                    String s = line.strip();
                    if (heading == null && s.startsWith("#")) {
                        heading = s.replaceFirst("^#+", "").strip();
                    } else if (heading != null && !s.isEmpty() && !s.startsWith("#")) {
                        paragraph.append(paragraph.length() == 0 ? "" : " ").append(s);
                    } else if (paragraph.length() > 0) {
                        break;
                    }
                }
                if (name == null && heading != null && !heading.isEmpty()) {
                    name = heading;
                }
                if (description == null && paragraph.length() > 0) {
                    description = paragraph.toString();
                }
            }
            return new Skill(text, name, description);
        }

        private static String unquote(String value) {
            if (value.length() >= 2 && (value.startsWith("\"") && value.endsWith("\"")
                    || value.startsWith("'") && value.endsWith("'"))) {
                return value.substring(1, value.length() - 1);
            }
            return value;
        }
    }

    @Override
    public String toString() {
        return "SkillResolver.directory(" + directory + ")";
    }
}
