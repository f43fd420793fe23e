package dev.parley.example;

import dev.parley.chat.testing.NodeTests;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The chat page's Markdown renderer, run by Node's test runner: formatting renders, markup never does. */
class MarkdownNodeTest {
    @Test
    void theRendererIsSafe() throws Exception {
        NodeTests.assertPasses("src/test/js/markdown.test.mjs", Map.of());
    }
}
