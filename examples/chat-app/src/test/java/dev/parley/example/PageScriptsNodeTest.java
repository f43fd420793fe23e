package dev.parley.example;

import dev.parley.chat.testing.NodeTests;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The chat page's modules, run by Node's test runner: the Markdown renderer (formatting renders, markup
 * never does), the approval card and the line saying how an answer ended.
 */
class PageScriptsNodeTest {
    @Test
    void theRendererIsSafe() throws Exception {
        NodeTests.assertPasses("src/test/js/markdown.test.mjs", Map.of());
    }

    @Test
    void theApprovalCardShowsSendsAndRecordsDecisions() throws Exception {
        NodeTests.assertPasses("src/test/js/approvals.test.mjs", Map.of());
    }

    @Test
    void anAnswerSaysHowItEndedAndWhenItWasCutOff() throws Exception {
        NodeTests.assertPasses("src/test/js/outcome.test.mjs", Map.of());
    }
}
