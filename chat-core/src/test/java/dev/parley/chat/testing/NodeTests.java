package dev.parley.chat.testing;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Runs a JavaScript test file with Node's test runner ({@code node --test}) from a JUnit test. */
public final class NodeTests {
    private NodeTests() {
    }

    /**
     * Runs {@code script} (relative to the module directory) and fails unless every Node test passed; skips the
     * calling test where the build found no Node.js ({@link BuildTools}).
     *
     * @param env extra environment variables for the script
     */
    public static void assertPasses(String script, Map<String, String> env) throws IOException, InterruptedException {
        BuildTools.assumePresent("node");
        ProcessBuilder builder = new ProcessBuilder(List.of("node", "--test", "--test-reporter=spec", script))
                .directory(new File("."))
                .redirectErrorStream(true);
        builder.environment().putAll(env);
        Process node;
        try {
            node = builder.start();
        } catch (IOException e) {
            throw new AssertionError("Node.js 20+ is needed to run " + script + " (node --test)", e);
        }
        byte[] output = node.getInputStream().readAllBytes();
        assertThat(node.waitFor(120, TimeUnit.SECONDS)).as("node finished").isTrue();
        String report = new String(output, StandardCharsets.UTF_8);
        System.out.println(report);
        assertThat(node.exitValue()).as(report).isZero();
        assertThat(report).containsPattern("fail 0\\b").doesNotContainPattern("pass 0\\b");
    }
}
