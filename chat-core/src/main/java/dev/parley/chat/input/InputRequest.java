package dev.parley.chat.input;

/**
 * What a pending input asks, one shape per {@link InputKind}. Immutable.
 */
public sealed interface InputRequest permits ClarifyRequest, ApprovalRequest, ClientToolRequest {
    InputKind kind();
}
