package dev.parley.chat.runtime;

import dev.parley.chat.input.ApprovalDecision;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A person's decision on an approval the runtime asked for.
 *
 * @param inputId the input id of the runtime's {@code InputRequested}
 * @param editedArguments the arguments the person changed (JSON text), null to keep the asked ones
 */
public record ApprovalReply(String runId, String inputId, ApprovalDecision decision, @Nullable String editedArguments) {
    public ApprovalReply {
        Objects.requireNonNull(runId, "runId");
        Objects.requireNonNull(inputId, "inputId");
        Objects.requireNonNull(decision, "decision");
    }
}
