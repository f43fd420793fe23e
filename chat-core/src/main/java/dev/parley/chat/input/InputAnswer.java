package dev.parley.chat.input;

/** A person's answer to a pending input, one shape per {@link InputKind}. Immutable. */
public sealed interface InputAnswer permits ClarifyAnswer, ApprovalAnswer, ClientToolAnswer {
    InputKind kind();
}
