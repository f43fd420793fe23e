package dev.parley.chat.input;

import java.util.EnumSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * A call that runs only if the person allows it.
 *
 * @param toolName the tool or action that would run
 * @param arguments its arguments, as JSON text
 * @param description what will happen and why it needs a person's approval, for the person to read
 * @param decisions the decisions the person may make: always {@link ApprovalDecision#ALLOW_ONCE} and
 *     {@link ApprovalDecision#DENY} (added if missing), the others only when the asker offers them; kept in
 *     the enum's order
 * @param argumentsEditable whether the person may change the arguments before allowing the call
 */
public record ApprovalRequest(
        String toolName,
        String arguments,
        String description,
        List<ApprovalDecision> decisions,
        boolean argumentsEditable) implements InputRequest {

    public ApprovalRequest {
        Objects.requireNonNull(toolName, "toolName");
        Objects.requireNonNull(arguments, "arguments");
        Objects.requireNonNull(description, "description");
        Set<ApprovalDecision> offered = EnumSet.of(ApprovalDecision.ALLOW_ONCE, ApprovalDecision.DENY);
        if (decisions != null) {
            offered.addAll(decisions);
        }
        decisions = List.copyOf(offered);
    }

    /** An approval offering allow once and deny. */
    public static ApprovalRequest of(String toolName, String arguments, String description) {
        return new ApprovalRequest(toolName, arguments, description, List.of(), false);
    }

    @Override
    public InputKind kind() {
        return InputKind.APPROVAL;
    }
}
