package dev.parley.chat.mcp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.parley.chat.ChatException;
import dev.parley.chat.ErrorCode;
import dev.parley.chat.engine.ApprovalPolicy;
import dev.parley.chat.engine.HostActionApproval;
import io.modelcontextprotocol.spec.McpSchema;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Annotations are untrusted hints: only readOnlyHint true skips the approval, and the host's settings win. */
class McpApprovalDefaultsTest {
    private static final McpServer SERVER = McpServer.stdio("fs", "node", "server.js");

    private static McpSchema.Tool tool(String name, Boolean readOnly, Boolean destructive) {
        McpSchema.ToolAnnotations annotations = readOnly == null && destructive == null ? null
                : new McpSchema.ToolAnnotations(null, readOnly, destructive, null, null, null);
        return new McpSchema.Tool(name, null, "d", Map.of("type", "object"), null, annotations, null);
    }

    @Test
    void withoutSettingsOnlyAToolMarkedReadOnlyRunsWithoutAsking() {
        assertThat(McpTools.approval(SERVER, tool("read", true, null)).policy()).isEqualTo(ApprovalPolicy.NEVER);
        assertThat(McpTools.approval(SERVER, tool("unmarked", null, null)).policy()).isEqualTo(ApprovalPolicy.ALWAYS);
        assertThat(McpTools.approval(SERVER, tool("notdestructive", false, false)).policy())
                .as("not destructive is still not read-only").isEqualTo(ApprovalPolicy.ALWAYS);
        assertThat(McpTools.approval(SERVER, tool("write", false, true)).policy()).isEqualTo(ApprovalPolicy.ALWAYS);
    }

    @Test
    void theServersPolicyThenTheToolsOverrideWinOverTheHints() {
        McpServer server = SERVER.withApproval(McpApproval.oncePerThread())
                .withToolApproval("read", McpApproval.always().withEditableArguments())
                .withToolApproval("write", McpApproval.never());
        HostActionApproval read = McpTools.approval(server, tool("read", true, null));
        assertThat(read.policy()).isEqualTo(ApprovalPolicy.ALWAYS);
        assertThat(read.argumentsEditable()).isTrue();
        assertThat(McpTools.approval(server, tool("write", false, true)).policy()).isEqualTo(ApprovalPolicy.NEVER);
        assertThat(McpTools.approval(server, tool("other", true, null)).policy()).isEqualTo(ApprovalPolicy.ONCE_PER_THREAD);
    }

    @Test
    void theDescriptionSaysWhatTheServerClaims() {
        assertThat(McpTools.approval(SERVER, tool("write", false, true)).description().apply(null))
                .isEqualTo("Calls write on the MCP server fs (the server does not say it only reads: it may change"
                        + " or delete things).");
    }

    @Test
    void aBadServerConfigurationIsAConfigurationError() {
        assertThatThrownBy(() -> McpServer.stdio("has space", "node"))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIGURATION));
        assertThatThrownBy(() -> McpTools.builder().server(SERVER).server(McpServer.http("fs", "http://localhost/mcp")))
                .isInstanceOfSatisfying(ChatException.class, e -> assertThat(e.code()).isEqualTo(ErrorCode.CONFIGURATION));
    }
}
