package dev.parley.chat.testing;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;

/**
 * The tools some tests need besides a JDK, as the build found them. A module whose tests need Node.js, npm,
 * Python or a browser runs the build's tools probe first (the root pom's {@code tools-probe}); it prints one
 * warning for each tool it does not find, or fails the build under {@code -Dparley.require-all-tools=true},
 * and hands the missing ones to the tests in {@value #MISSING}. A test calls {@link #assumePresent} first and
 * so is skipped, not failed, where the build already said why.
 */
public final class BuildTools {
    /** The system property with the missing tools, space-separated: {@code node npm python browser jdk21}. */
    public static final String MISSING = "parley.tools.missing";

    private BuildTools() {
    }

    /**
     * Skips the calling test (a JUnit assumption) where the build's probe found {@code tool} missing. Outside
     * such a build (an IDE) nothing is skipped, and a missing tool shows as the test's failure.
     */
    public static void assumePresent(String tool) {
        boolean missing = Arrays.asList(System.getProperty(MISSING, "").strip().split("\\s+")).contains(tool);
        Assumptions.assumeFalse(missing, () -> "SKIPPED: no " + tool + " on this machine; the build's warning"
                + " says how to get it");
    }

    /** The executable {@code command} in a directory on {@code PATH}, if there is one. */
    public static Optional<Path> onPath(String command) {
        String path = System.getenv().getOrDefault("PATH", "");
        return Arrays.stream(path.split(File.pathSeparator))
                .filter(dir -> !dir.isEmpty())
                .map(dir -> Path.of(dir, command))
                .filter(Files::isExecutable)
                .findFirst();
    }
}
