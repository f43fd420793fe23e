package dev.parley.chat.mcp;

import dev.parley.chat.engine.ApprovalPolicy;
import java.util.Objects;

/**
 * Whether a person approves a call of an MCP tool before it runs, set per server and per tool
 * ({@link McpServer#withApproval}, {@link McpServer#withToolApproval}). A tool with none set follows its
 * annotations as untrusted hints: only a tool the server marks {@code readOnlyHint: true} runs without asking.
 *
 * @param policy never, always, or once per thread (the person may then allow the tool for the conversation)
 * @param argumentsEditable whether the person may edit the arguments before allowing the call
 */
public record McpApproval(ApprovalPolicy policy, boolean argumentsEditable) {
    public McpApproval {
        Objects.requireNonNull(policy, "policy");
    }

    /** Calls run without asking. */
    public static McpApproval never() {
        return new McpApproval(ApprovalPolicy.NEVER, false);
    }

    /** Every call waits for the person. */
    public static McpApproval always() {
        return new McpApproval(ApprovalPolicy.ALWAYS, false);
    }

    /** The first call in a thread waits; the person may allow the tool for the rest of the conversation. */
    public static McpApproval oncePerThread() {
        return new McpApproval(ApprovalPolicy.ONCE_PER_THREAD, false);
    }

    /** The same approval, letting the person edit the arguments. */
    public McpApproval withEditableArguments() {
        return new McpApproval(policy, true);
    }
}
