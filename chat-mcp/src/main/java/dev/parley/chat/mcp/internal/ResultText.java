package dev.parley.chat.mcp.internal;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.ArrayList;
import java.util.List;

/**
 * What the model reads of an MCP tool's result: structured content as JSON when the tool gives it, else its
 * text parts joined by blank lines; images, audio and resources are noted in a line each (attachments are not
 * handed over); the whole cut at a limit with a marker saying so.
 */
public final class ResultText {
    private static final ObjectMapper JSON = new ObjectMapper();

    private ResultText() {
    }

    /** The text of {@code result}, at most {@code limit} characters plus the truncation marker. */
    public static String of(McpSchema.CallToolResult result, int limit) {
        List<String> parts = new ArrayList<>();
        if (result.structuredContent() != null && !Boolean.TRUE.equals(result.isError())) {
            parts.add(json(result.structuredContent()));
        } else {
            result.content().stream().filter(McpSchema.TextContent.class::isInstance)
                    .map(c -> ((McpSchema.TextContent) c).text()).forEach(parts::add);
        }
        for (McpSchema.Content content : result.content()) {
            String note = note(content);
            if (note != null) {
                parts.add(note);
            }
        }
        return truncate(String.join("\n\n", parts), limit);
    }

    /** {@code text} cut to {@code limit} characters, with a marker saying how much was shown. */
    public static String truncate(String text, int limit) {
        if (text.length() <= limit) {
            return text;
        }
        return text.substring(0, limit) + "\n… [truncated by Parley: " + limit + " of " + text.length()
                + " characters shown]";
    }

    private static String note(McpSchema.Content content) {
        if (content instanceof McpSchema.ImageContent image) {
            return "[image " + image.mimeType() + ", about " + image.data().length() * 3 / 4
                    + " bytes, not shown: MCP images are not handed to the model]";
        }
        if (content instanceof McpSchema.AudioContent audio) {
            return "[audio " + audio.mimeType() + ", not shown]";
        }
        if (content instanceof McpSchema.ResourceLink link) {
            return "[resource link " + link.uri() + (link.mimeType() == null ? "" : " (" + link.mimeType() + ")") + "]";
        }
        if (content instanceof McpSchema.EmbeddedResource embedded) {
            if (embedded.resource() instanceof McpSchema.TextResourceContents text) {
                return "[resource " + text.uri() + "]\n" + text.text();
            }
            return "[resource " + embedded.resource().uri() + ", binary, not shown]";
        }
        return null;
    }

    private static String json(Object value) {
        try {
            return JSON.writeValueAsString(value);
        } catch (JsonProcessingException e) {
            return String.valueOf(value);
        }
    }
}
