package dev.parley.chat.mcp.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.modelcontextprotocol.spec.McpSchema;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ResultTextTest {

    private static McpSchema.CallToolResult result(List<McpSchema.Content> content, Boolean error, Object structured) {
        return new McpSchema.CallToolResult(content, error, structured, null);
    }

    @Test
    void textPartsAreJoinedAndAnImageIsNoted() {
        String text = ResultText.of(result(List.of(new McpSchema.TextContent("one"), new McpSchema.TextContent("two"),
                new McpSchema.ImageContent(null, "iVBORw0KGgo=", "image/png")), null, null), 1_000);
        assertThat(text).isEqualTo("one\n\ntwo\n\n[image image/png, about 9 bytes, not shown: MCP images are not"
                + " handed to the model]");
    }

    @Test
    void structuredContentIsGivenAsJsonInsteadOfItsTextCopy() {
        String text = ResultText.of(result(List.of(new McpSchema.TextContent("{\"temperature\": 21}")), null,
                Map.of("temperature", 21)), 1_000);
        assertThat(text).isEqualTo("{\"temperature\":21}");
    }

    @Test
    void anErrorGivesItsTextEvenWithStructuredContent() {
        String text = ResultText.of(result(List.of(new McpSchema.TextContent("no such city")), true,
                Map.of("temperature", 0)), 1_000);
        assertThat(text).isEqualTo("no such city");
    }

    @Test
    void aLongResultIsCutWithAMarker() {
        String text = ResultText.of(result(List.of(new McpSchema.TextContent("abcdefghij")), null, null), 4);
        assertThat(text).isEqualTo("abcd\n… [truncated by Parley: 4 of 10 characters shown]");
    }
}
