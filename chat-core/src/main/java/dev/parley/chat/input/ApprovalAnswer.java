package dev.parley.chat.input;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A decision on an approval.
 *
 * @param editedArguments the arguments the person changed (JSON text) when allowing an editable call;
 *     null to keep them as asked
 */
public record ApprovalAnswer(ApprovalDecision decision, @Nullable String editedArguments) implements InputAnswer {
    public ApprovalAnswer {
        Objects.requireNonNull(decision, "decision");
    }

    public static ApprovalAnswer of(ApprovalDecision decision) {
        return new ApprovalAnswer(decision, null);
    }

    @Override
    public InputKind kind() {
        return InputKind.APPROVAL;
    }
}
